// An account's usage per UTC day (account_usage_days, migrations/1765520000000-account-usage-days.ts):
// the credits captured and the processing seconds of the jobs created that day, kept up to date in
// the transaction that writes the rows they sum. The spend cap, the quota, the balance's "spent" and
// "minutes used" and the 30-day chart read at most a month's (or the chart's) rows of it instead of
// summing every charge and job of the period (docs/explain-10m.md).
//
// The two numbers, each exactly what the sums over the rows gave:
// - captured_credits: SUM(credits) of the account's 'capture' ledger rows, by the row's created_at day
//   (appendLedger adds it; a capture is never reversed: the ledger has no such kind).
// - processing_seconds: over the account's jobs by their created_at day, an open job's
//   estimated_seconds and an ended one's processed_seconds. The submit adds the estimate
//   (JobsRepository.insert); the job's ending adds processed − estimated (JobLifecycle's ending),
//   to the day the job was created, whichever day it ends.
// Jobs deleted by the retention purge stay counted: the numbers are what the account used then.
//
// Lock order: a row of this table is written only by a transaction that already holds its account's
// row lock (the submit's lockAccounts, the settlement's and the grant's balance UPDATE). Writers of one
// account therefore touch its rows one after another, never in a cycle with the accounts row, and
// the migration's backfill (which takes the same lock) never misses a write made beside it.

/** A timestamptz column's UTC day, as the table keys it. */
export const utcDay = (column: string): string => `(${column} AT TIME ZONE 'UTC')::date`;

/**
 * Adds `select`'s rows (account_id, day, amount) to `column` of their days, creating a day's row at
 * its first use. For a data-modifying WITH item, so the rows it sums are written in the same statement.
 */
export const addToUsageDays = (column: 'captured_credits' | 'processing_seconds', select: string): string =>
  `INSERT INTO account_usage_days (account_id, day, ${column}) ${select}
   ON CONFLICT (account_id, day) DO UPDATE SET ${column} = account_usage_days.${column} + EXCLUDED.${column}`;

/** `column` summed over the account's days from `sinceDay` (SQL parameters: the account id, a 'YYYY-MM-DD' day). */
const summed = (column: string, account: string, sinceDay: string): string =>
  `(SELECT COALESCE(SUM(${column}), 0) FROM account_usage_days WHERE account_id = ${account} AND day >= ${sinceDay}::date)`;

/** Credits captured from the account since a UTC day, for a read of its own or a larger one. */
export const capturedCreditsSince = (account: string, sinceDay: string): string =>
  summed('captured_credits', account, sinceDay);

/** Processing seconds of the account's jobs created since a UTC day (open jobs at their estimate). */
export const processingSecondsSince = (account: string, sinceDay: string): string =>
  summed('processing_seconds', account, sinceDay);

/**
 * The UTC day `since` starts, as the reads take it ('YYYY-MM-DD'). The table holds whole days, so only
 * a UTC midnight (a billing period's start, src/billing/billing-period.ts) can be asked for.
 */
export function usageDay(since: Date): string {
  if (since.getTime() % 86_400_000 !== 0)
    throw new Error(`usage is kept per UTC day: ${since.toISOString()} is not a day's start`);
  return since.toISOString().slice(0, 10);
}
