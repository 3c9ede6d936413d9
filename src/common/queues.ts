// The catalogue of queues and the job names on them, typed: a consumer's handler map must name every
// job of its queue (the compiler checks it), and the worker checks it again at boot (`checkHandlers`),
// so a name added here without a handler stops start-up with a message saying what to add where.
import type { ConnectionOptions, Job, Queue, RedisOptions as BullRedisOptions } from 'bullmq';
import type { AppConfig } from './config/config';
import { createCluster, redisOptions } from './redis/redis.module';

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

/** A whole job (process-job), one of its items (process-item, with `index`), or a segment of an item (process-segment, with both). */
export interface MediaJobData {
  jobId: string;
  index?: number;
  segment?: number;
  /** Attempts of this unit that ended in an error of its own (not an outage): see MEDIA_JOB_MAX_ERRORS. */
  errors?: number;
}

export const PROCESS_JOB: JobName<'media'> = 'process-job';
export const PROCESS_ITEM: JobName<'media'> = 'process-item';
export const PROCESS_SEGMENT: JobName<'media'> = 'process-segment';

/**
 * The one way a media job is queued, by the API and by the reconciler: the BullMQ id is the job id (a
 * second add of a waiting job is a no-op).
 *
 * An outage never uses a job or item up: an attempt that fails because PostgreSQL or Redis is
 * unreachable, and a worker lost mid-run (a stall: SIGKILL, OOM, a node lost), are tried again for as
 * long as it takes, with capped backoff (mediaBackoffMs); BullMQ's attempt and stall limits are set out
 * of reach. What ends work that cannot finish is its own: the job's time limit (JOB_TIME_LIMIT_SECONDS
 * from its first start, checked at every start) or MEDIA_JOB_MAX_ERRORS errors of its own (MediaWorker).
 */
export async function enqueueMediaJob(queue: Queue<MediaJobData>, jobId: string): Promise<void> {
  await queue.add(PROCESS_JOB, { jobId }, mediaJobOptions(jobId));
}

/**
 * Queues items of a job as units of their own, by the worker that took the job and by the reconciler.
 * Each unit's BullMQ id is `<job id>.<index>`, so adding one that is still waiting or running is a
 * no-op; retries as for a job.
 */
export async function enqueueMediaItems(queue: Queue<MediaJobData>, jobId: string, indexes: number[]): Promise<void> {
  if (indexes.length === 0) return;
  await queue.addBulk(
    indexes.map((index) => ({
      name: PROCESS_ITEM,
      data: { jobId, index },
      opts: mediaJobOptions(mediaItemUnitId(jobId, index)),
    })),
  );
}

export function mediaItemUnitId(jobId: string, index: number): string {
  return `${jobId}.${index}`;
}

/**
 * Queues segments of an item as units of their own (any worker of the region): BullMQ id
 * `<job id>.<index>.s<segment>`, so adding one still waiting or running is a no-op; a failed or lost
 * segment is retried alone (attempts as for a job).
 */
export async function enqueueMediaSegments(
  queue: Queue<MediaJobData>,
  jobId: string,
  index: number,
  segments: number[],
): Promise<void> {
  if (segments.length === 0) return;
  await queue.addBulk(
    segments.map((segment) => ({
      name: PROCESS_SEGMENT,
      data: { jobId, index, segment },
      opts: mediaJobOptions(mediaSegmentUnitId(jobId, index, segment)),
    })),
  );
}

export function mediaSegmentUnitId(jobId: string, index: number, segment: number): string {
  return `${jobId}.${index}.s${segment}`;
}

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

function mediaJobOptions(jobId: string) {
  return {
    jobId,
    attempts: MEDIA_JOB_ATTEMPTS,
    backoff: { type: MEDIA_BACKOFF },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  };
}

/** Webhook deliveries are not tied to a region: any worker may send them. */
export const WEBHOOK_QUEUE = 'webhooks';

export interface WebhookJobData {
  deliveryId: string;
}

/**
 * The one way a webhook delivery is queued, by the pump and for a punctual retry: the BullMQ id names
 * the delivery and its attempt number, so a delivery already queued for that attempt is not added
 * twice. Nothing is kept once run: the database holds the delivery's state, and the pump queues again
 * whatever is due and unleased (a lost or failed queue job costs at most a pump interval).
 */
export async function enqueueWebhookDeliveries(
  queue: Queue<WebhookJobData>,
  deliveries: { id: string; attempts: number }[],
  delayMs = 0,
): Promise<void> {
  if (deliveries.length === 0) return;
  await queue.addBulk(
    deliveries.map((delivery) => ({
      name: 'deliver' as const,
      data: { deliveryId: delivery.id },
      opts: {
        jobId: `${delivery.id}-${delivery.attempts}`,
        delay: delayMs,
        removeOnComplete: true,
        removeOnFail: true,
      },
    })),
  );
}

export function cancelChannel(config: AppConfig): string {
  return `${config.redisPrefix}:cancel`;
}

/** Every region that ever had a worker (the metrics read each one's queue, even with no worker left). */
export function regionsKey(config: AppConfig): string {
  return `${config.redisPrefix}:regions`;
}

export function workersKey(config: AppConfig, region: string): string {
  return `${config.redisPrefix}:workers:${region}`;
}

/**
 * BullMQ's connection (from the one factory, common/redis): fail fast in the API; workers block on
 * Redis, so no per-request cap. On a cluster BullMQ takes a Cluster client (it builds plain clients
 * only from options): a producer's is used as it is and dropped by closeQueue; a consumer's is the
 * worker's main connection and is duplicated for its blocking one, and BullMQ closes neither for
 * good, so QueueOwner.stopWorker closes them (disconnectConsumer). The queue keys share the
 * prefix's hash tag (`{mj}:media.local:…`), as BullMQ requires of a queue on a cluster.
 */
export function bullConnection(config: AppConfig, role: 'producer' | 'worker'): ConnectionOptions {
  const redisRole = role === 'producer' ? 'producer' : 'blocking';
  if (config.redisTopology.kind === 'cluster') {
    return createCluster(config, `bull-${role}`, redisRole, role === 'worker');
  }
  const options: BullRedisOptions = redisOptions(config, redisRole);
  return options;
}

/** A raw Redis client as BullMQ's Redis backend hands it out. */
interface RawClient {
  status: string;
  disconnect(): void;
}

/** What `closeQueue` needs of a BullMQ Queue (its Redis backend's clients). */
interface ClosableQueue {
  close(): Promise<void>;
  readonly backend: { readonly client: Promise<RawClient> };
}

/** How long closing a queue may wait for Redis before its clients are dropped. */
const CLOSE_GRACE_MS = 2000;

/**
 * Closes a BullMQ queue, also while Redis is unreachable. There BullMQ's close() never
 * returns (it waits for a connection that cannot come back), or returns with the QUIT it could not
 * send swallowed; either way its clients stay, reconnecting for ever — knocking on Redis after
 * shutdown and keeping the process alive. So: close, wait at most CLOSE_GRACE_MS, then drop the client
 * if it is not closed (nothing to drop when QUIT went through: its status is then 'end'). Not for a
 * Worker: its close() waits for running jobs to finish, which no grace period may cut short.
 */
export async function closeQueue(target: ClosableQueue): Promise<void> {
  const grace = <T>(promise: Promise<T>): Promise<T | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), CLOSE_GRACE_MS)));
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  };
  // A close that fails (its QUIT refused by a Redis that went away) leaves clients to drop below.
  await grace(target.close().catch(() => undefined));
  // A client that never connected has nothing to drop: its rejection is the outage itself.
  const client = await grace(target.backend.client.catch(() => undefined));
  if (client && client.status !== 'end') client.disconnect();
}
