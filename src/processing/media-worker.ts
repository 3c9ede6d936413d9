import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { isUnavailableError } from '../common/errors/classify';
import {
  bullConnection,
  cancelChannel,
  enqueueMediaJob,
  mediaQueueName,
  queueDispatcher,
  regionsKey,
  workersKey,
  type MediaJobData,
} from '../common/queues';
import { STORAGE, type Storage } from '../common/storage/storage';
import { jobsRunning } from '../metrics/job-metrics';
import { JobProcessor } from './job-processor';
import { ProcessingRepository } from './processing.repository';
import { StorageSweeper } from './storage-sweeper';

const HEARTBEAT_MS = 10_000;
const RECONCILE_PAGE = 100;

/**
 * The worker process's media queue consumer for its region, with what keeps it honest: a
 * heartbeat (region health), cancel signals that kill running media processes, a reconciler
 * that re-enqueues jobs the queue lost and fails jobs BullMQ gave up on, and retention purges.
 */
@Injectable()
export class MediaWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MediaWorker.name);
  private readonly workerId = randomUUID();
  private readonly running = new Map<string, AbortController>();
  private worker?: Worker<MediaJobData>;
  private queue?: Queue<MediaJobData>;
  private subscriber?: Redis;
  private commands?: Redis;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly processor: JobProcessor,
    private readonly repository: ProcessingRepository,
    private readonly sweeper: StorageSweeper,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const dispatch = queueDispatcher('media', { 'process-job': (job) => this.handle(job) }, 'MediaWorker');
    const name = mediaQueueName(this.config.region);
    const connection = bullConnection(this.config, 'worker');
    this.queue = new Queue<MediaJobData>(name, { connection, prefix: this.config.redisPrefix });
    this.worker = new Worker<MediaJobData>(name, dispatch, {
      connection,
      prefix: this.config.redisPrefix,
      concurrency: this.config.workerConcurrency,
      lockDuration: this.config.workerLockMs,
      stalledInterval: this.config.workerLockMs,
      maxStalledCount: 2,
    });
    this.worker.on('failed', (job, error) => void this.onFailed(job, error));
    this.worker.on('error', (error) => this.logger.warn({ err: error }, 'queue connection error'));
    // The worker above reports the connection's errors; the queue's (used by the reconciler) fail its
    // own calls, which the maintenance task logs. Node needs a listener either way.
    this.queue.on('error', () => undefined);

    this.commands = new Redis(this.config.redisUrl, { maxRetriesPerRequest: 1 });
    // Connection errors fail the heartbeat's commands, which the maintenance task logs.
    this.commands.on('error', () => undefined);
    // Reconnected (e.g. Redis restarted and lost every key): announce this worker at once rather than
    // at the next beat, so the region does not answer region_unavailable for up to HEARTBEAT_MS.
    this.commands.on('ready', () => {
      this.heartbeat().catch((error: unknown) => this.logger.warn({ err: error }, 'heartbeat after reconnect failed'));
    });
    this.subscriber = new Redis(this.config.redisUrl, { maxRetriesPerRequest: null });
    // A lost subscription reconnects by itself; a cancel sent meanwhile is caught at the next progress mark.
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel, jobId: string) => this.running.get(jobId)?.abort());
    await this.subscriber.subscribe(cancelChannel(this.config));

    await this.heartbeat();
    this.every(HEARTBEAT_MS, () => this.heartbeat());
    // Re-enqueues open jobs untouched for WORKER_STALE_JOB_SECONDS that the queue lost (Redis restart).
    this.every(this.config.workerReconcileMs, () => this.reconcile());
    this.every(3600_000, () => this.purge());
    this.every(this.sweeper.intervalMs, async () => void (await this.sweeper.sweep()));
  }

  /** SIGTERM: stop taking jobs and let running ones finish (BullMQ hands back what it must). */
  async onApplicationShutdown(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await this.worker?.close();
    await this.queue?.close();
    // Leaving the region's worker set early is a courtesy: unreachable Redis forgets us after 5 minutes.
    await this.commands
      ?.zrem(workersKey(this.config, this.config.region), this.workerId)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not leave the worker set'));
    this.subscriber?.disconnect();
    this.commands?.disconnect();
  }

  private async handle(job: Job<MediaJobData>): Promise<void> {
    const controller = new AbortController();
    this.running.set(job.data.jobId, controller);
    jobsRunning.inc();
    try {
      await this.processor.process(job.data.jobId, controller.signal);
    } finally {
      this.running.delete(job.data.jobId);
      jobsRunning.dec();
    }
  }

  /** BullMQ's final failure (infrastructure, retried already): end the job and release its hold. */
  private async onFailed(job: Job<MediaJobData> | undefined, error: Error): Promise<void> {
    if (!job) return;
    const final = job.attemptsMade >= (job.opts.attempts ?? 1);
    this.logger.warn(
      { job_id: job.data.jobId, attempt: job.attemptsMade, final, err: error },
      'media job attempt failed',
    );
    if (!final) return;
    await this.processor.failWhole(job.data.jobId, 'upstream_error').catch((failure: unknown) => {
      // The job stays open and keeps its hold; the reconciler fails it once it has gone stale.
      this.logger.error({ job_id: job.data.jobId, err: failure }, 'could not fail a job the queue gave up on');
    });
  }

  private async heartbeat(): Promise<void> {
    const key = workersKey(this.config, this.config.region);
    await this.commands!.multi()
      .zadd(key, Date.now(), this.workerId)
      .zremrangebyscore(key, '-inf', Date.now() - 5 * 60_000)
      .sadd(regionsKey(this.config), this.config.region)
      .exec();
  }

  /** Every stale open job of this region, a page at a time (a long waiting queue must not hide the rest). */
  private async reconcile(): Promise<void> {
    for (let afterId = ''; ;) {
      const page = await this.repository.staleOpenJobs(
        this.config.region,
        this.config.workerStaleJobSeconds,
        RECONCILE_PAGE,
        afterId,
      );
      for (const job of page) await this.reconcileOne(job.id);
      if (page.length < RECONCILE_PAGE) return;
      afterId = page[page.length - 1].id;
    }
  }

  private async reconcileOne(jobId: string): Promise<void> {
    const queued = await this.queue!.getJob(jobId);
    const state = queued ? await queued.getState() : 'missing';
    if (state === 'missing' || state === 'unknown') {
      await enqueueMediaJob(this.queue!, jobId);
    } else if (state === 'failed' || state === 'completed') {
      await this.processor.failWhole(jobId, 'upstream_error');
    }
  }

  private async purge(): Promise<void> {
    const keys = await this.repository.purgeExpired(this.config.jobRetentionDays);
    await this.storage.removeMany(keys);
  }

  private every(ms: number, task: () => Promise<void>): void {
    const timer = setInterval(() => {
      task().catch((error: unknown) => {
        if (!isUnavailableError(error)) this.logger.error({ err: error }, 'worker maintenance task failed');
      });
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }
}
