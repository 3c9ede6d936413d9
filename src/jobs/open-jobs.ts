// An account's open jobs (accounts.open_jobs, migrations/1765530000000-account-open-jobs.ts): its jobs
// queued or processing, the number the concurrency limit compares (src/jobs/limits.ts) and the balance
// shows as running_jobs. Kept in the statement that opens a job (JobsRepository.insert) and in the one
// that ends it (JobLifecycleRepository.endJob: every ending goes from an open status to a terminal
// one, once), so the limit reads one row instead of counting the open jobs, a heap page for each
// (docs/explain-10m.md).
//
// Lock order: the number is written only under the account's row lock. The submit holds it
// (lockAccount) when it inserts the job; the ending takes it in the statement that flips the job,
// after the job's row lock, as the hold's settlement that follows in the same transaction always did.
// A submit's locking read of the account therefore sees every job opened or ended before it.

/**
 * For a data-modifying WITH item: adds `change` to open_jobs of the account that `accountOf` (a
 * one-row, one-column SELECT) names.
 */
export const addToOpenJobs = (change: 1 | -1, accountOf: string): string =>
  `UPDATE accounts SET open_jobs = open_jobs ${change > 0 ? '+' : '-'} 1 WHERE id = (${accountOf})`;
