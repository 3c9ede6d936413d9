// The BullMQ driver: the one place a BullMQ Queue or Worker is created (as immich's JobRepository):
// every queue of the catalogue with its connection from the one Redis factory (common/redis), each
// unit's job options, each consumer's options, and one error policy for their connection events.
import { Logger } from '@nestjs/common';
import { Queue, Worker, type ConnectionOptions, type JobsOptions, type WorkerOptions } from 'bullmq';
import type { AppConfig } from '../../common/config/config';
import { disconnectConsumer } from '../../common/redis/redis.module';
import { queueDispatcher, queueName, type QueueData, type QueueHandlers, type QueueKind } from '../catalogue';
import type { QueueDriver, QueueSide, QueueUnit } from '../driver';
import { MEDIA_BACKOFF, MEDIA_JOB_ATTEMPTS, MEDIA_JOB_MAX_STALLS, mediaBackoffMs } from '../retry-policy';
import { bullConnection, closeQueue } from './bullmq-connection';

/** Webhook attempts in flight per worker process (each waits up to 10 s on an endpoint). */
const WEBHOOK_CONCURRENCY = 10;

/**
 * A unit's BullMQ options. Media: retried for as long as an outage lasts (retry-policy.ts), gone once
 * completed, kept a day once failed (the reconciler reads that state). Webhooks: nothing is kept once
 * run — the database holds the delivery's state, and the pump queues again whatever is due and unleased.
 */
export function bullJobOptions(kind: QueueKind, unit: QueueUnit<QueueKind>): JobsOptions {
  if (kind === 'webhooks') {
    return { jobId: unit.id, delay: unit.delayMs ?? 0, removeOnComplete: true, removeOnFail: true };
  }
  return {
    jobId: unit.id,
    ...(unit.delayMs ? { delay: unit.delayMs } : {}),
    ...(unit.priority ? { priority: unit.priority } : {}),
    attempts: MEDIA_JOB_ATTEMPTS,
    backoff: { type: MEDIA_BACKOFF },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  };
}

/** Each consumer's BullMQ settings, by queue. */
function workerOptions(kind: QueueKind, config: AppConfig): Omit<WorkerOptions, 'connection' | 'prefix'> {
  if (kind === 'webhooks') return { concurrency: WEBHOOK_CONCURRENCY };
  return {
    concurrency: config.workerConcurrency,
    lockDuration: config.workerLockMs,
    stalledInterval: config.workerLockMs,
    // A lost worker is an outage, not the job's fault (retry-policy.ts).
    maxStalledCount: MEDIA_JOB_MAX_STALLS,
    settings: {
      backoffStrategy: (attemptsMade: number, type?: string) => {
        if (type !== MEDIA_BACKOFF) throw new Error(`Unknown backoff strategy ${type} on the media queue`);
        return mediaBackoffMs(attemptsMade);
      },
    },
  };
}

export class BullMqDriver implements QueueDriver {
  private readonly logger = new Logger(BullMqDriver.name);
  private readonly queues = new Map<string, Queue>();
  /** Each consumer with the connection it was given (on a cluster, closed with it: disconnectConsumer). */
  private readonly workers = new Map<Worker, ConnectionOptions>();

  constructor(private readonly config: AppConfig) {}

  async add<Q extends QueueKind>(kind: Q, side: QueueSide, region: string, units: QueueUnit<Q>[]): Promise<void> {
    if (units.length === 0) return;
    const queue = this.queue(kind, side, region) as Queue;
    await queue.addBulk(
      units.map((unit) => ({
        name: unit.name,
        data: unit.data,
        opts: bullJobOptions(kind, unit as QueueUnit<QueueKind>),
      })),
    );
  }

  /** One queue per process, side and name: the API's submit and its queue board share one. */
  queue<Q extends QueueKind>(kind: Q, side: QueueSide, region: string): Queue<QueueData[Q]> {
    const name = queueName(kind, region);
    const key = `${side}:${name}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = new Queue(name, { connection: bullConnection(this.config, side), prefix: this.config.redisPrefix });
      // A connection error fails the add or read that meets it (a 503, a logged task failure, the
      // board's message); the event itself needs a listener, or Node would throw it.
      queue.on('error', () => undefined);
      this.queues.set(key, queue);
    }
    return queue as Queue<QueueData[Q]>;
  }

  work<Q extends QueueKind>(kind: Q, region: string, handlers: QueueHandlers<Q>, owner: string): Worker<QueueData[Q]> {
    const name = queueName(kind, region);
    const connection = bullConnection(this.config, 'worker');
    const worker = new Worker<QueueData[Q]>(name, queueDispatcher(kind, handlers, owner), {
      connection,
      prefix: this.config.redisPrefix,
      ...workerOptions(kind, this.config),
    });
    // The consumer's connection is the one that notices an outage first: said once here, for every queue.
    worker.on('error', (error) => this.logger.warn({ err: error, queue: name }, 'queue connection error'));
    this.workers.set(worker, connection);
    return worker;
  }

  async stopWorker(worker: Worker): Promise<void> {
    const connection = this.workers.get(worker);
    this.workers.delete(worker);
    try {
      await worker.close();
    } finally {
      disconnectConsumer(connection);
    }
  }

  /** A later `queue()` opens a new one. */
  async closeQueue(queue: Queue): Promise<void> {
    for (const [key, known] of this.queues) if (known === queue) this.queues.delete(key);
    await closeQueue(queue);
  }

  stopTaking(): void {
    for (const worker of this.workers.keys()) {
      worker.close().catch((error: unknown) => this.logger.warn({ err: error }, 'a consumer did not close'));
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.workers.keys()].map((worker) => this.stopWorker(worker)));
    // Shutting down: a queue whose Redis is unreachable has nothing left to flush, and shutdown must go on.
    await Promise.allSettled([...this.queues.values()].map((queue) => this.closeQueue(queue)));
  }
}
