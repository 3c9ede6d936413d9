import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { forEachAccountBatch, onOneConnection, underAccountLocks, type SqlOnOneConnection } from './account-batches';

// accounts.open_jobs: how many of the account's jobs are open (queued or processing), the number the
// concurrency limit compares and the balance shows as running_jobs. Counting them on every submit
// visited one heap page per open job (jobs_active_idx holds the ids; a job written since the last
// VACUUM is not all-visible, so each is checked in the table): at 10 million jobs the growth bench's
// ~1,000 open jobs sat on ~1,100 pages, against ~90 at 10 thousand (docs/explain-10m.md), and a
// submit's and a balance's p99 grew with the table. The service keeps the number in the statements
// that take a job's credit hold at its submit and settle it at its ending, under the account's row
// lock (src/billing/holds.ts); this migration counts the jobs open before it.
//
// ADD COLUMN with a constant default rewrites nothing (PostgreSQL ≥ 11 keeps the default in the
// catalogue); its ACCESS EXCLUSIVE lock is held for the catalogue change only. The count then runs in
// short transactions, BATCH_ACCOUNTS accounts at a time, each locking its accounts' rows FOR NO KEY
// UPDATE (the submit's lock) before counting in a statement of its own, like the usage-days backfill
// (migrations/1765520000000-account-usage-days.ts): a job opened or ended by the new version before a
// batch's lock is in its count, one waiting for the lock adds or takes its one afterwards.
//
// The old version does not keep the number: a job it opens or ends after its account's batch leaves
// the count one off until it is counted again. Run `npm run admin -- recount-open-jobs` once the old
// version has stopped; it is exact whenever it runs (it replaces, never adds).
const BATCH_ACCOUNTS = 500;

export class AccountOpenJobs1765530000000 implements MigrationInterface {
  name = 'AccountOpenJobs1765530000000';
  // Its own short transactions (a batch each), not one around the whole count.
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts ADD COLUMN IF NOT EXISTS open_jobs integer NOT NULL DEFAULT 0`);
    await recountOpenJobs((text, params) => q.query(text, params));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts DROP COLUMN IF EXISTS open_jobs`);
  }
}

/**
 * Sets every account's open_jobs (or only `accounts`') to the count of its open jobs, BATCH_ACCOUNTS
 * accounts at a time, each batch in a transaction of its own under its accounts' row locks. `sql` runs
 * on one connection that is not inside a transaction. Returns how many accounts it went through.
 */
export function recountOpenJobs(sql: SqlOnOneConnection, options: { accounts?: string[] } = {}): Promise<number> {
  return forEachAccountBatch(sql, { size: BATCH_ACCOUNTS, accounts: options.accounts }, (ids) =>
    underAccountLocks(sql, ids, async () => {
      // The open statuses as src/jobs/job-lifecycle.ts names them, spelled out so that the partial
      // index of open jobs (jobs_active_idx) answers; only rows that change are written.
      await sql(
        `UPDATE accounts SET open_jobs = counted.open
           FROM (SELECT id, (SELECT count(*) FROM jobs WHERE account_id = accounts.id
                                AND status IN ('queued', 'processing'))::int AS open
                   FROM accounts WHERE id = ANY($1)) counted
          WHERE accounts.id = counted.id AND accounts.open_jobs IS DISTINCT FROM counted.open`,
        [ids],
      );
    }),
  );
}

/**
 * recountOpenJobs on one connection taken from `db` for the purpose (the admin command
 * `recount-open-jobs`, tests and benchmarks that write job rows by hand).
 */
export function recountOpenJobsOn(db: DataSource, options: { accounts?: string[] } = {}): Promise<number> {
  return onOneConnection(db, (sql) => recountOpenJobs(sql, options));
}
