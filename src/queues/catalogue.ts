// The catalogue of queues and the job names on them, typed: a consumer's handler map must name every
// job of its queue (the compiler checks it), and the worker checks it again at boot (`checkHandlers`),
// so a name added here without a handler stops start-up with a message saying what to add where.
import type { Job } from 'bullmq';

export const QUEUE_JOBS = {
  // process-job takes a job and queues each of its open items as a process-item unit, which any
  // worker of the region runs (in parallel); the unit that ends the last item ends the job.
  // A long sdr2hdr item is split into segments, each a process-segment unit on any worker of the
  // region; the unit that ends the last segment joins them and ends the item.
  media: ['process-job', 'process-item', 'process-segment'],
  webhooks: ['deliver'],
} as const;

export type QueueKind = keyof typeof QUEUE_JOBS;
export type JobName<Q extends QueueKind> = (typeof QUEUE_JOBS)[Q][number];

/** What each queue's jobs carry. */
export interface QueueData {
  media: MediaJobData;
  webhooks: WebhookJobData;
}

export type QueueHandlers<Q extends QueueKind> = Record<JobName<Q>, (job: Job<QueueData[Q]>) => Promise<void>>;

/**
 * The handler map of a queue's consumer, checked against the catalogue: a missing handler (possible
 * when the map is built from untyped pieces) stops start-up with a message naming the job and `owner`.
 * The returned function runs a job by its name and fails one whose name is not in the catalogue.
 */
export function queueDispatcher<Q extends QueueKind>(
  queue: Q,
  handlers: QueueHandlers<Q>,
  owner: string,
): (job: Job<QueueData[Q]>) => Promise<void> {
  const known: readonly string[] = QUEUE_JOBS[queue];
  const missing = known.filter((name) => typeof (handlers as Record<string, unknown>)[name] !== 'function');
  if (missing.length) {
    throw new Error(`No handler for ${queue} queue job(s) ${missing.join(', ')}: add one in ${owner}`);
  }
  return (job) => {
    if (!known.includes(job.name)) {
      return Promise.reject(new Error(`Unknown ${queue} queue job "${job.name}" (not in QUEUE_JOBS)`));
    }
    return handlers[job.name as JobName<Q>](job);
  };
}

/** Media jobs run only on workers of their region, so each region has its own queue. */
export function mediaQueueName(region: string): string {
  return `media.${region}`;
}

/** Webhook deliveries are not tied to a region: any worker may send them. */
export const WEBHOOK_QUEUE = 'webhooks';

/** The queue's name on the backend: media queues are per region, webhooks have one for every worker. */
export function queueName(kind: QueueKind, region: string): string {
  return kind === 'media' ? mediaQueueName(region) : WEBHOOK_QUEUE;
}

/** A whole job (process-job), one of its items (process-item, with `index`), or a segment of an item (process-segment, with both). */
export interface MediaJobData {
  jobId: string;
  index?: number;
  segment?: number;
  /** Attempts of this unit that ended in an error of its own (not an outage): see MEDIA_JOB_MAX_ERRORS. */
  errors?: number;
  /** Whose work it is and their plan, for the fair share (fair-share.ts): items and segments carry them. */
  account?: string;
  plan?: string;
}

export const PROCESS_JOB: JobName<'media'> = 'process-job';
export const PROCESS_ITEM: JobName<'media'> = 'process-item';
export const PROCESS_SEGMENT: JobName<'media'> = 'process-segment';

/** An item's unit id: adding one that is still waiting or running is a no-op. */
export function mediaItemUnitId(jobId: string, index: number): string {
  return `${jobId}.${index}`;
}

/** A segment's unit id: adding one that is still waiting or running is a no-op. */
export function mediaSegmentUnitId(jobId: string, index: number, segment: number): string {
  return `${jobId}.${index}.s${segment}`;
}

export interface WebhookJobData {
  deliveryId: string;
}
