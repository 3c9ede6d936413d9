// How long a media unit is tried (driver-independent numbers; the BullMQ driver turns them into its
// job and worker options). An outage never uses a job or item up: an attempt that fails because
// PostgreSQL or Redis is unreachable, and a worker lost mid-run (a stall: SIGKILL, OOM, a node lost),
// are tried again for as long as it takes, with capped backoff (mediaBackoffMs); the backend's attempt
// and stall limits are set out of reach. What ends work that cannot finish is its own: the job's time
// limit (JOB_TIME_LIMIT_SECONDS from its first start, checked at every start) or MEDIA_JOB_MAX_ERRORS
// errors of its own (MediaWorker).

/** BullMQ's own limits, out of reach of any outage (about 3 years of attempts at the backoff cap). */
export const MEDIA_JOB_ATTEMPTS = 10_000_000;
export const MEDIA_JOB_MAX_STALLS = 10_000_000;
/** Errors of a unit's own (neither PostgreSQL nor Redis unreachable) before it fails as processing_failed. */
export const MEDIA_JOB_MAX_ERRORS = 3;
export const MEDIA_BACKOFF = 'media-capped';
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_CAP_MS = 10_000;

/** The wait before attempt n+1: doubling from 1 s, capped at 10 s (an outage's end is noticed soon), with jitter. */
export function mediaBackoffMs(attemptsMade: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, attemptsMade - 1));
  return Math.round(ceiling * (0.5 + Math.random() / 2));
}
