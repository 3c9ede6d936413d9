// The job, money, webhook and worker series (README "Metrics"). Each is recorded at the one place its
// event happens: the job lifecycle (submit, claim, end), billing's holds (after their transaction
// commits), the webhook dispatcher (each attempt) and the media worker (jobs running). Label sets are
// bounded: api (2), status (4), error codes (the catalogue), outcome classes and height classes.
import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from './registry';

const registers = [metricsRegistry];

export const jobsSubmitted = new Counter({
  name: 'mediajobs_jobs_submitted_total',
  help: 'Jobs accepted (202) by api',
  labelNames: ['api'] as const,
  registers,
});

export const jobsFinished = new Counter({
  name: 'mediajobs_jobs_finished_total',
  help: 'Jobs that ended, by api, final status and error code ("none" when it succeeded)',
  labelNames: ['api', 'status', 'code'] as const,
  registers,
});

export const jobDuration = new Histogram({
  name: 'mediajobs_job_duration_seconds',
  help: 'Time from a worker taking a job to its end (processing, upload of outputs, settlement), by api',
  labelNames: ['api'] as const,
  buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200],
  registers,
});

export const queueWait = new Histogram({
  name: 'mediajobs_queue_wait_seconds',
  help: "Time from submit to a worker taking the job (first take only), by api and the account's plan",
  labelNames: ['api', 'plan'] as const,
  buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
  registers,
});

export const itemsFinished = new Counter({
  name: 'mediajobs_job_items_total',
  help: 'Job items that ended, by api and outcome (succeeded, failed, cancelled)',
  labelNames: ['api', 'outcome'] as const,
  registers,
});

export const encodeSpeed = new Histogram({
  name: 'mediajobs_encode_speed_ratio',
  help: 'Media seconds processed per wall-clock second of the media run, by api and output height class',
  labelNames: ['api', 'height'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128],
  registers,
});

export const itemStageSeconds = new Histogram({
  name: 'mediajobs_item_stage_seconds',
  help: 'Wall time of each stage of one job item in a worker (claim, input, check, probe, encode, store, end, cleanup), by api',
  labelNames: ['api', 'stage'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 1800],
  registers,
});

export const jobsRunning = new Gauge({
  name: 'mediajobs_jobs_running',
  help: 'Job items (queue units) this worker process is running now',
  registers,
});

export const credits = new Counter({
  name: 'mediajobs_credits_total',
  help: 'Credits moved by holds, counted when their transaction commits: authorised (held at submit), captured (charged), released (returned)',
  labelNames: ['movement'] as const,
  registers,
});

export const settlementDuration = new Histogram({
  name: 'mediajobs_settlement_duration_seconds',
  help: 'Time to end a job once its items are done: the one transaction that writes status, items, assets, settles the hold and writes the event',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
});

export const webhookAttempts = new Counter({
  name: 'mediajobs_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome: 2xx, 3xx, 4xx, 5xx (the answer), timeout, refused (nothing listening or address refused), error (other failures)',
  labelNames: ['outcome'] as const,
  registers,
});

export const webhookLag = new Histogram({
  name: 'mediajobs_webhook_delivery_lag_seconds',
  help: "Time from an event's creation to its delivery's first 2xx answer",
  buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800, 7200, 36000],
  registers,
});

export type Movement = 'authorised' | 'captured' | 'released';
export type AttemptOutcomeClass = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'refused' | 'error';

/** What a job's end is made of, as the lifecycle knows it. */
export interface EndedJob {
  api: string;
  status: string;
  error: { code: string } | null;
  startedAt: Date | null;
  items: readonly { status: string }[];
  /** performance.now() when the ending transaction began (worker endings). */
  settlementStartedAt?: number;
}

const seconds = (from: Date, to = Date.now()): number => Math.max(0, (to - from.getTime()) / 1000);

export function jobSubmitted(api: string): void {
  jobsSubmitted.inc({ api });
}

/**
 * A worker took a job: its queue wait counts on the first take only (a re-take after a crash is no
 * wait). By plan, never by account: the fair share's effect is visible per plan with bounded labels.
 */
export function jobClaimed(job: {
  api: string;
  plan: string;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
}): void {
  if (job.attempts === 1 && job.started_at)
    queueWait.observe({ api: job.api, plan: job.plan }, seconds(job.created_at, job.started_at.getTime()));
}

/** A job ended (committed): its status and code, its duration since taken, its items' outcomes. */
export function jobEnded(job: EndedJob): void {
  jobsFinished.inc({ api: job.api, status: job.status, code: job.error?.code ?? 'none' });
  if (job.settlementStartedAt !== undefined)
    settlementDuration.observe((performance.now() - job.settlementStartedAt) / 1000);
  if (job.startedAt) jobDuration.observe({ api: job.api }, seconds(job.startedAt));
  for (const item of job.items) itemsFinished.inc({ api: job.api, outcome: item.status });
}

/** The output height as a class (so the label set stays small): 480, 720, 1080, 1440, 2160 or none. */
export function heightClass(height: number | null | undefined): string {
  if (!height || height <= 0) return 'none';
  for (const limit of [480, 720, 1080, 1440]) if (height <= limit) return String(limit);
  return '2160';
}

export function mediaRun(api: string, mediaSeconds: number, wallSeconds: number, height: number | null): void {
  if (wallSeconds > 0 && mediaSeconds > 0)
    encodeSpeed.observe({ api, height: api === 'audio' ? 'none' : heightClass(height) }, mediaSeconds / wallSeconds);
}

export function creditsMoved(movement: Movement, amount: number): void {
  if (amount > 0) credits.inc({ movement }, amount);
}

/** The class of a webhook attempt: the answer's status class, else why no answer came. */
export function attemptOutcome(statusCode: number | null, error: string | null): AttemptOutcomeClass {
  if (statusCode !== null && statusCode >= 200 && statusCode < 600)
    return `${Math.floor(statusCode / 100)}xx` as AttemptOutcomeClass;
  if (error && /did not answer within|timed? ?out|ETIMEDOUT/i.test(error)) return 'timeout';
  if (error && /ECONNREFUSED|unreachable|not allowed|private|refused/i.test(error)) return 'refused';
  return 'error';
}

export function webhookAttempted(
  outcome: AttemptOutcomeClass,
  eventCreatedAt: Date | null,
  firstSuccess: boolean,
): void {
  webhookAttempts.inc({ outcome });
  if (outcome === '2xx' && firstSuccess && eventCreatedAt) webhookLag.observe(seconds(eventCreatedAt));
}
