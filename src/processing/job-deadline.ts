import type { AppConfig } from '../common/config/config';
import type { JobRow } from '../jobs/job.types';

/**
 * When a job's time runs out: JOB_TIME_LIMIT_SECONDS after its first start (now, for one not started),
 * the same for every item and segment of it, and checked again at every (re)start.
 */
export function jobDeadline(job: Pick<JobRow, 'started_at'>, config: Pick<AppConfig, 'jobTimeLimitSeconds'>): number {
  return (job.started_at?.getTime() ?? Date.now()) + config.jobTimeLimitSeconds * 1000;
}

/** The time a job has left (≤ 0: none). */
export function timeLeftMs(deadline: number): number {
  return deadline - Date.now();
}
