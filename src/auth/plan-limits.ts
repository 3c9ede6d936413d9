import type { PlanLimits } from './auth-context';

/** The plan columns a credential lookup selects (from `plans p`), read back by `planLimitsOf`. */
export const PLAN_COLUMNS = `p.id AS plan_id, p.requests_per_second, p.concurrent_jobs, p.processing_minutes_per_month,
  p.apis, p.max_output_height, p.usd_per_credit, p.event_streams`;

export function planLimitsOf(row: Record<string, unknown>): PlanLimits {
  return {
    id: row.plan_id as string,
    requestsPerSecond: row.requests_per_second as number,
    concurrentJobs: row.concurrent_jobs as number,
    processingMinutesPerMonth: row.processing_minutes_per_month as number | null,
    apis: row.apis as string[],
    maxOutputHeight: row.max_output_height as number,
    usdPerCredit: Number(row.usd_per_credit),
    eventStreams: row.event_streams as number,
  };
}
