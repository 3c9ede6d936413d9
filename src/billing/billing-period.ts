export interface BillingPeriod {
  start: Date;
  resetsAt: Date;
}

/** Billing periods are calendar months in UTC: spend caps and quotas reset at the first of the month. */
export function billingPeriod(now = new Date()): BillingPeriod {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, resetsAt };
}
