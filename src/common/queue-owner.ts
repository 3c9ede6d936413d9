// The one place a BullMQ Queue or Worker is created (as immich's JobRepository): every queue of the
// catalogue (queues.ts) with its connection from the one Redis factory (common/redis), each consumer's
// options, and one error policy for their connection events. Producers (the API's submit, the queue
// board) and consumers (the worker's media and webhook consumers) ask it for what they need; it closes
// whatever is left at shutdown.
import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Queue, Worker, type ConnectionOptions, type WorkerOptions } from 'bullmq';
import { APP_CONFIG, type AppConfig } from './config/config';
import { disconnectConsumer } from './redis/redis.module';
import {
  bullConnection,
  closeQueue,
  MEDIA_BACKOFF,
  MEDIA_JOB_MAX_STALLS,
  mediaBackoffMs,
  mediaQueueName,
  queueDispatcher,
  WEBHOOK_QUEUE,
  type QueueData,
  type QueueHandlers,
  type QueueKind,
} from './queues';

/** Webhook attempts in flight per worker process (each waits up to 10 s on an endpoint). */
const WEBHOOK_CONCURRENCY = 10;

/** Who uses a queue: the API only adds and reads (fails fast), a worker process waits on Redis. */
export type QueueSide = 'producer' | 'worker';

/** The BullMQ name of a queue: media queues are per region, webhooks have one for every worker. */
export function queueName(kind: QueueKind, region: string): string {
  return kind === 'media' ? mediaQueueName(region) : WEBHOOK_QUEUE;
}

/** Each consumer's BullMQ settings, by queue (the job options are in queues.ts, beside the enqueue functions). */
function workerOptions(kind: QueueKind, config: AppConfig): Omit<WorkerOptions, 'connection' | 'prefix'> {
  if (kind === 'webhooks') return { concurrency: WEBHOOK_CONCURRENCY };
  return {
    concurrency: config.workerConcurrency,
    lockDuration: config.workerLockMs,
    stalledInterval: config.workerLockMs,
    // A lost worker is an outage, not the job's fault (see enqueueMediaJob).
    maxStalledCount: MEDIA_JOB_MAX_STALLS,
    settings: {
      backoffStrategy: (attemptsMade: number, type?: string) => {
        if (type !== MEDIA_BACKOFF) throw new Error(`Unknown backoff strategy ${type} on the media queue`);
        return mediaBackoffMs(attemptsMade);
      },
    },
  };
}

@Injectable()
export class QueueOwner implements OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger(QueueOwner.name);
  private readonly queues = new Map<string, Queue>();
  /** Each consumer with the connection it was given (on a cluster, closed with it: disconnectConsumer). */
  private readonly workers = new Map<Worker, ConnectionOptions>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * The queue of `kind` (media: of `region`, this process's by default), one per process and side:
   * the API's submit and its queue board share one.
   */
  queue<Q extends QueueKind>(kind: Q, side: QueueSide, region = this.config.region): Queue<QueueData[Q]> {
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

  /**
   * Starts this process's consumer of `kind` (media: of its own region). The handler map is checked
   * against the catalogue (queueDispatcher: a missing handler stops start-up naming `owner`).
   */
  worker<Q extends QueueKind>(kind: Q, handlers: QueueHandlers<Q>, owner: string): Worker<QueueData[Q]> {
    const name = queueName(kind, this.config.region);
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

  /** Stops a consumer: no new jobs, running ones finish (no grace period may cut them short). */
  async stopWorker(worker: Worker): Promise<void> {
    const connection = this.workers.get(worker);
    this.workers.delete(worker);
    try {
      await worker.close();
    } finally {
      disconnectConsumer(connection);
    }
  }

  /** Closes a queue, also while Redis is unreachable (closeQueue); a later `queue()` opens a new one. */
  async closeQueue(queue: Queue): Promise<void> {
    for (const [key, known] of this.queues) if (known === queue) this.queues.delete(key);
    await closeQueue(queue);
  }

  /**
   * The first step of a stop (SIGTERM): every consumer stops taking jobs at once; its owner's own
   * shutdown hook (MediaWorker, WebhookDispatcher) then waits for its running jobs (stopWorker: the same
   * close). Nest runs the modules' hooks one module after another, so a consumer stopped only by its
   * owner's hook kept taking jobs for as long as an earlier module's hook waited (e.g. on Redis).
   */
  onModuleDestroy(): void {
    for (const worker of this.workers.keys()) {
      worker.close().catch((error: unknown) => this.logger.warn({ err: error }, 'a consumer did not close'));
    }
  }

  /** Whatever its users did not close: consumers first (their running jobs still use the queues). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.workers.keys()].map((worker) => this.stopWorker(worker)));
    // Shutting down: a queue whose Redis is unreachable has nothing left to flush, and shutdown must go on.
    await Promise.allSettled([...this.queues.values()].map((queue) => this.closeQueue(queue)));
  }
}

/** Global: the API's jobs and queue board and the worker's consumers all use the one owner. */
@Global()
@Module({ providers: [QueueOwner], exports: [QueueOwner] })
export class QueuesModule {}
