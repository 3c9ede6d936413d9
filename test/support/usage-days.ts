// Rows a test writes by hand into credit_ledger or jobs (a past month's history, a job that fills the
// quota or takes a concurrency slot) bypass the service, so what the balance, the chart and the limits
// read instead of those rows (account_usage_days, accounts.open_jobs) does not know them: after
// writing them, the test has the account's usage counted again, as the migrations count rows written
// before them (migrations/1765520000000-account-usage-days.ts, 1765530000000-account-open-jobs.ts).
import type { DataSource } from 'typeorm';
import { backfillAccountUsageDaysOn } from '../../migrations/1765520000000-account-usage-days';
import { recountOpenJobsOn } from '../../migrations/1765530000000-account-open-jobs';

export async function countUsageAgain(db: DataSource, accountId: string): Promise<void> {
  await backfillAccountUsageDaysOn(db, { accounts: [accountId] });
  await recountOpenJobsOn(db, { accounts: [accountId] });
}

export interface UsageDay {
  day: string;
  captured: number;
  seconds: number;
}

const usageDays = (rows: { day: string; captured: string; seconds: string }[]): UsageDay[] =>
  rows
    .map((row) => ({ day: row.day, captured: Number(row.captured), seconds: Number(row.seconds) }))
    .filter((day) => day.captured !== 0 || day.seconds !== 0);

/** The account's captures and processing seconds per UTC day since `from`, summed over the rows themselves. */
export async function usageSummedFromRows(db: DataSource, accountId: string, from: Date): Promise<UsageDay[]> {
  return usageDays(
    await db.query(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, SUM(captured)::text AS captured, SUM(seconds)::text AS seconds
         FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS day, credits AS captured, 0 AS seconds
                 FROM credit_ledger WHERE account_id = $1 AND kind = 'capture' AND created_at >= $2
               UNION ALL
               SELECT (created_at AT TIME ZONE 'UTC')::date, 0,
                      CASE WHEN status IN ('queued', 'processing') THEN estimated_seconds ELSE processed_seconds END
                 FROM jobs WHERE account_id = $1 AND created_at >= $2) used
        GROUP BY day ORDER BY day`,
      [accountId, from],
    ),
  );
}

/** The same days as account_usage_days keeps them (what the balance, the chart and the limits read). */
export async function usageDaysKept(db: DataSource, accountId: string, from: Date): Promise<UsageDay[]> {
  return usageDays(
    await db.query(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, captured_credits::text AS captured, processing_seconds::text AS seconds
         FROM account_usage_days WHERE account_id = $1 AND day >= $2::date ORDER BY day`,
      [accountId, from.toISOString().slice(0, 10)],
    ),
  );
}
