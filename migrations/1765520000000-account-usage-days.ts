import type { MigrationInterface, QueryRunner } from 'typeorm';

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
// Short transactions, no long lock: a batch of BATCH_ACCOUNTS accounts at a time, each batch one
// transaction that locks its accounts' rows FOR NO KEY UPDATE (the lock a submit takes; a settlement's
// and a grant's balance UPDATE conflict with it too) and then, in statements that start after the lock
// is held, replaces those accounts' days in the window with the sums over credit_ledger and jobs.
// credit_ledger and jobs are only read (by their account indexes); a batch stops the submits of its own
// accounts for as long as its sums take (a large account's 90 days: about a second at 10 million jobs).
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
    await backfillAccountUsageDays(q);
    await q.query(`ANALYZE account_usage_days`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS account_usage_days`);
  }
}

/**
 * Replaces account_usage_days, from the window's first day on, with the sums over credit_ledger and
 * jobs: every account (or only `accounts`), BATCH_ACCOUNTS at a time, each batch in a transaction of
 * its own under its accounts' row locks (see above). `q` must not be inside a transaction. Returns how
 * many accounts it went through.
 */
export async function backfillAccountUsageDays(q: QueryRunner, options: { accounts?: string[] } = {}): Promise<number> {
  const [{ from }]: { from: string }[] = await q.query(
    `SELECT to_char(LEAST(date_trunc('month', now() AT TIME ZONE 'UTC')::date,
                          (now() AT TIME ZONE 'UTC')::date - ($1::int - 1)), 'YYYY-MM-DD') AS from`,
    [BACKFILL_DAYS],
  );
  let done = 0;
  for (let after = ''; ;) {
    await q.startTransaction();
    let ids: string[];
    try {
      const locked: { id: string }[] = await q.query(
        `SELECT id FROM accounts WHERE id > $1 AND ($3::text[] IS NULL OR id = ANY($3))
          ORDER BY id LIMIT $2 FOR NO KEY UPDATE`,
        [after, BATCH_ACCOUNTS, options.accounts ?? null],
      );
      ids = locked.map((account) => account.id);
      if (ids.length) {
        await q.query(`DELETE FROM account_usage_days WHERE account_id = ANY($1) AND day >= $2::date`, [ids, from]);
        // The sums as the reads computed them before this table: captures by the ledger row's day,
        // jobs by their creation day at their estimate while open, their processed time once ended.
        await q.query(
          `INSERT INTO account_usage_days (account_id, day, captured_credits, processing_seconds)
           SELECT account_id, day, SUM(captured), SUM(seconds)
             FROM (SELECT account_id, (created_at AT TIME ZONE 'UTC')::date AS day, credits AS captured, 0 AS seconds
                     FROM credit_ledger
                    WHERE account_id = ANY($1) AND kind = 'capture' AND created_at >= $2::date::timestamp AT TIME ZONE 'UTC'
                   UNION ALL
                   SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, 0,
                          CASE WHEN status IN ('queued', 'processing') THEN estimated_seconds ELSE processed_seconds END
                     FROM jobs
                    WHERE account_id = ANY($1) AND created_at >= $2::date::timestamp AT TIME ZONE 'UTC') used
            GROUP BY account_id, day`,
          [ids, from],
        );
      }
      await q.commitTransaction();
    } catch (error) {
      await q.rollbackTransaction();
      throw error;
    }
    done += ids.length;
    if (ids.length < BATCH_ACCOUNTS) return done;
    after = ids[ids.length - 1];
  }
}
