// Rows a test writes by hand into credit_ledger or jobs (a past month's history, a job that fills the
// quota) bypass the service, so account_usage_days, which the balance, the chart and the limits read,
// does not know them: after writing them, the test has the account's days summed again, as the
// migration's backfill sums rows written before it (migrations/1765520000000-account-usage-days.ts).
import type { DataSource } from 'typeorm';
import { backfillAccountUsageDays } from '../../migrations/1765520000000-account-usage-days';

export async function sumUsageDaysAgain(db: DataSource, accountId: string): Promise<void> {
  const runner = db.createQueryRunner();
  try {
    await backfillAccountUsageDays((text, params) => runner.query(text, params), { accounts: [accountId] });
  } finally {
    await runner.release();
  }
}
