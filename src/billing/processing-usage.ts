// Billing shows how much of the monthly processing quota an account used, but the minutes are the
// jobs module's to count and billing must not import jobs (it is a leaf). So billing names what it
// needs here and the jobs module provides it (JobsUsageModule): when no module provides it, Nest
// stops start-up ("can't resolve dependencies of BillingService"), instead of a quota that reads 0.

export interface ProcessingUsage {
  /** Whole processing minutes an account used since `since`, a UTC day's start (running jobs count their estimate). */
  minutesUsedSince(accountId: string, since: Date): Promise<number>;
}

export const PROCESSING_USAGE = Symbol('PROCESSING_USAGE');
