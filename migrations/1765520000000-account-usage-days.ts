import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { forEachAccountBatch, onOneConnection, underAccountLocks, type SqlOnOneConnection } from './account-batches';

// account_usage_days: per account and UTC day, the credits captured and the processing seconds of the
// jobs created that day (what src/billing/usage-days.ts says of the two numbers). The balance, the
// dashboard's chart, and the submit's quota and spend-cap checks read at most a month's or the
// chart's rows (≤ 90, by the primary key) instead of summing every charge and job of the period
// (~135k rows for the largest account at 10 million jobs, docs/explain-10m.md). The service keeps it
// up to date in the transactions that write those rows; this migration fills it for the rows written
// before.
//
// The backfill covers the last BACKFILL_DAYS days (the chart's longest range, GET /v1/account/usage
// ?days ≤ 90) and at least this calendar month (the quota's and the spend cap's period): no read asks
// for an earlier day, and the rows of the service's earlier years are not read at all.
//
// Short transactions, no long lock: BATCH_ACCOUNTS accounts and CHUNK_DAYS days at a time, each one
// transaction that locks its accounts' rows FOR NO KEY UPDATE (the lock a submit takes; a settlement's
// and a grant's balance UPDATE conflict with it too) and then, in statements that start after the lock
// is held, replaces those accounts' days of the chunk with the sums over credit_ledger and jobs.
// credit_ledger and jobs are only read (by their account indexes, jobs_account_created_idx and
// credit_ledger_captures_idx); a transaction holds up the submits and settlements of its own accounts
// for as long as its sums take: at most 85 ms measured for an account with 100k jobs and 200k ledger
// rows a month (docs/explain-10m.md), where one transaction for its 90 days held it for 1.1 s.
//
// Rows written meanwhile. The new version writes this table only while it holds the account's row
// lock (usage-days.ts), so against the new version a batch is exact whatever runs beside it: a write
// committed before the batch's lock is in the sums (and its own addition is replaced by them); one
// waiting for the lock adds to the sums afterwards — a settlement that already flipped its job but
// waits for the balance is summed at the job's estimate, then adds processed − estimated, as intended.
// A rolling deploy runs this migration before the new version serves, but the old version keeps
// serving while it runs and until it is replaced, and the old version does not write this table:
// what it writes after its account's batch (a submit's estimate, an ending's seconds, a capture) is
// missing from it, so quota and "spent" read low by that much until the backfill is run again.
// backfillAccountUsageDays is safe to run at any time and exact (it replaces, never adds): run it
// once the old version has stopped (`npm run admin -- rebuild-usage-days`). If the new version served
// before this migration had run, its reads and writes would fail (no table) until it had.
const BACKFILL_DAYS = 90;
const BATCH_ACCOUNTS = 50;
const CHUNK_DAYS = 10;

export class AccountUsageDays1765520000000 implements MigrationInterface {
  name = 'AccountUsageDays1765520000000';
  // Its own short transactions (a batch each), not one around the whole backfill.
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    // IF NOT EXISTS: a backfill interrupted half-way is simply run again (it replaces what it finds).
    await q.query(`
      CREATE TABLE IF NOT EXISTS account_usage_days (
        account_id text NOT NULL REFERENCES accounts (id),
        day date NOT NULL,
        captured_credits bigint NOT NULL DEFAULT 0,
        processing_seconds numeric NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, day)
      )`);
    await backfillAccountUsageDays((text, params) => q.query(text, params));
    await q.query(`ANALYZE account_usage_days`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS account_usage_days`);
  }
}

/**
 * Replaces account_usage_days, from the window's first day on, with the sums over credit_ledger and
 * jobs: every account (or only `accounts`), BATCH_ACCOUNTS accounts and CHUNK_DAYS days at a time,
 * each in a transaction of its own under its accounts' row locks (see above; days are independent, so
 * a chunk of them is exact on its own). `sql` runs on one connection that is not inside a transaction.
 * Returns how many accounts it went through.
 */
export async function backfillAccountUsageDays(
  sql: SqlOnOneConnection,
  options: { accounts?: string[] } = {},
): Promise<number> {
  const [{ from, today }] = (await sql(
    `SELECT to_char(LEAST(date_trunc('month', now() AT TIME ZONE 'UTC')::date,
                          (now() AT TIME ZONE 'UTC')::date - ($1::int - 1)), 'YYYY-MM-DD') AS from,
            to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS today`,
    [BACKFILL_DAYS],
  )) as { from: string; today: string }[];
  // [first, end) per chunk; the last one has no end: it takes today, and tomorrow should midnight pass meanwhile.
  const chunks: [string, string | null][] = [];
  for (let first = from; ;) {
    const end = addDays(first, CHUNK_DAYS);
    if (end > today) {
      chunks.push([first, null]);
      break;
    }
    chunks.push([first, end]);
    first = end;
  }
  return forEachAccountBatch(sql, { size: BATCH_ACCOUNTS, accounts: options.accounts }, async (ids) => {
    for (const [first, end] of chunks) {
      await underAccountLocks(sql, ids, async () => {
        await sql(
          `DELETE FROM account_usage_days
            WHERE account_id = ANY($1) AND day >= $2::date AND ($3::date IS NULL OR day < $3::date)`,
          [ids, first, end],
        );
        // The sums as the reads computed them before this table: captures by the ledger row's day,
        // jobs by their creation day at their estimate while open, their processed time once ended.
        await sql(
          `INSERT INTO account_usage_days (account_id, day, captured_credits, processing_seconds)
           SELECT account_id, day, SUM(captured), SUM(seconds)
             FROM (SELECT account_id, (created_at AT TIME ZONE 'UTC')::date AS day, credits AS captured, 0 AS seconds
                     FROM credit_ledger
                    WHERE account_id = ANY($1) AND kind = 'capture'
                      AND created_at >= $2::date::timestamp AT TIME ZONE 'UTC'
                      AND ($3::date IS NULL OR created_at < $3::date::timestamp AT TIME ZONE 'UTC')
                   UNION ALL
                   SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, 0,
                          CASE WHEN status IN ('queued', 'processing') THEN estimated_seconds ELSE processed_seconds END
                     FROM jobs
                    WHERE account_id = ANY($1)
                      AND created_at >= $2::date::timestamp AT TIME ZONE 'UTC'
                      AND ($3::date IS NULL OR created_at < $3::date::timestamp AT TIME ZONE 'UTC')) used
            GROUP BY account_id, day`,
          [ids, first, end],
        );
      });
    }
  });
}

/**
 * backfillAccountUsageDays on one connection taken from `db` for the purpose (the admin command
 * `rebuild-usage-days`, tests that write ledger or job rows by hand).
 */
export function backfillAccountUsageDaysOn(db: DataSource, options: { accounts?: string[] } = {}): Promise<number> {
  return onOneConnection(db, (sql) => backfillAccountUsageDays(sql, options));
}

/** A 'YYYY-MM-DD' day `days` later. */
function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}
