import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { isUnavailableError } from '../common/errors/classify';
import { newId } from '../common/ids';
import {
  bullConnection,
  cancelChannel,
  enqueueMediaItems,
  enqueueMediaJob,
  enqueueMediaSegments,
  MEDIA_BACKOFF,
  MEDIA_JOB_MAX_ERRORS,
  MEDIA_JOB_MAX_STALLS,
  mediaBackoffMs,
  mediaItemUnitId,
  closeQueue,
  mediaQueueName,
  PROCESS_ITEM,
  PROCESS_SEGMENT,
  queueDispatcher,
  regionsKey,
  workersKey,
  type MediaJobData,
} from '../common/queues';
import { STORAGE, type Storage } from '../common/storage/storage';
import { jobsRunning } from '../metrics/job-metrics';
import { ItemEnding } from './item-ending';
import { ProcessingRepository } from './processing.repository';
import { SegmentFiles } from './segment-files';
import { StorageSweeper } from './storage-sweeper';
import { EncodeSegment } from './usecases/encode-segment/encode-segment.usecase';
import { RunItem } from './usecases/run-item/run-item.usecase';

const HEARTBEAT_MS = 10_000;
const RECONCILE_PAGE = 100;

/**
 * The worker process's media queue consumer for its region, with what keeps it honest: a
 * heartbeat (region health), cancel signals that kill running media processes, a reconciler
 * that re-enqueues jobs and items the queue lost and fails those BullMQ gave up on, and retention
 * purges. A job's unit (process-job) queues its items as units of their own (process-item), which
 * this and every other worker of the region run in parallel.
 */
@Injectable()
export class MediaWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MediaWorker.name);
  /** This process's opaque id: in the region's worker set and on each item it runs (items[i].worker). */
  private readonly workerId = newId('wkr');
  /** The items running here, by job id: a cancel aborts all of them. */
  private readonly running = new Map<string, Set<AbortController>>();
  private worker?: Worker<MediaJobData>;
  private queue?: Queue<MediaJobData>;
  private subscriber?: Redis;
  private commands?: Redis;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly runItem: RunItem,
    private readonly encodeSegment: EncodeSegment,
    private readonly ending: ItemEnding,
    private readonly segmentFiles: SegmentFiles,
    private readonly repository: ProcessingRepository,
    private readonly sweeper: StorageSweeper,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const dispatch = queueDispatcher(
      'media',
      {
        'process-job': (job) => this.unit(job, () => this.fanOut(job)),
        'process-item': (job) => this.unit(job, () => this.handleItem(job)),
        'process-segment': (job) => this.unit(job, () => this.handleSegment(job)),
      },
      'MediaWorker',
    );
    const name = mediaQueueName(this.config.region);
    const connection = bullConnection(this.config, 'worker');
    this.queue = new Queue<MediaJobData>(name, { connection, prefix: this.config.redisPrefix });
    this.worker = new Worker<MediaJobData>(name, dispatch, {
      connection,
      prefix: this.config.redisPrefix,
      concurrency: this.config.workerConcurrency,
      lockDuration: this.config.workerLockMs,
      stalledInterval: this.config.workerLockMs,
      // A lost worker is an outage, not the job's fault (see enqueueMediaJob).
      maxStalledCount: MEDIA_JOB_MAX_STALLS,
      settings: {
        backoffStrategy: (attemptsMade: number, type?: string) => {
          if (type !== MEDIA_BACKOFF) throw new Error(`Unknown backoff strategy ${type} on the media queue`);
          return mediaBackoffMs(attemptsMade);
        },
      },
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
    this.subscriber.on('message', (_channel, jobId: string) => {
      for (const controller of this.running.get(jobId) ?? []) controller.abort();
    });
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
    if (this.queue) await closeQueue(this.queue);
    // Leaving the region's worker set early is a courtesy: unreachable Redis forgets us after 5 minutes.
    await this.commands
      ?.zrem(workersKey(this.config, this.config.region), this.workerId)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not leave the worker set'));
    this.subscriber?.disconnect();
    this.commands?.disconnect();
  }

  /** A job's unit: queue each of its open items as a unit of its own (a no-op for one already queued). */
  private async fanOut(job: Job<MediaJobData>): Promise<void> {
    const open = await this.repository.openItems(job.data.jobId);
    await enqueueMediaItems(this.queue!, job.data.jobId, open);
  }

  private async handleItem(job: Job<MediaJobData>): Promise<void> {
    const { jobId, index } = job.data;
    if (index === undefined) throw new Error(`${PROCESS_ITEM} unit ${job.id} has no item index`);
    const split = await this.whileRunning(jobId, (controller) =>
      this.runItem.execute({
        jobId,
        index,
        worker: this.workerId,
        signal: controller.signal,
        abort: () => controller.abort(),
      }),
    );
    // A long item was split: each segment is a unit of its own, for any worker of the region.
    if (split) await enqueueMediaSegments(this.queue!, jobId, index, split.segments);
  }

  private async handleSegment(job: Job<MediaJobData>): Promise<void> {
    const { jobId, index, segment } = job.data;
    if (index === undefined || segment === undefined) {
      throw new Error(`${PROCESS_SEGMENT} unit ${job.id} has no item index or segment`);
    }
    await this.whileRunning(jobId, (controller) =>
      this.encodeSegment.execute({
        jobId,
        index,
        segment,
        worker: this.workerId,
        signal: controller.signal,
        abort: () => controller.abort(),
      }),
    );
  }

  /** Runs work of a job with an AbortController that a cancel of the job aborts. */
  private async whileRunning<T>(jobId: string, work: (controller: AbortController) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const controllers = this.running.get(jobId) ?? new Set<AbortController>();
    controllers.add(controller);
    this.running.set(jobId, controllers);
    jobsRunning.inc();
    try {
      return await work(controller);
    } finally {
      controllers.delete(controller);
      if (controllers.size === 0) this.running.delete(jobId);
      jobsRunning.dec();
    }
  }

  /**
   * Runs a unit. An attempt that fails because PostgreSQL or Redis is unreachable goes back to BullMQ to
   * be tried again later (never counted against the work); any other error is the unit's own, and after
   * MEDIA_JOB_MAX_ERRORS of them its items fail as processing_failed.
   */
  private async unit(job: Job<MediaJobData>, work: () => Promise<void>): Promise<void> {
    const { jobId, index } = job.data;
    try {
      await work();
    } catch (error) {
      if (isUnavailableError(error)) {
        this.logger.warn({ job_id: jobId, item: index, err: error }, 'dependency unavailable; the unit is tried again');
        throw error;
      }
      const errors = (job.data.errors ?? 0) + 1;
      this.logger.error({ job_id: jobId, item: index, errors, err: error }, 'media unit failed');
      if (errors >= MEDIA_JOB_MAX_ERRORS) {
        await this.ending.fail(jobId, 'processing_failed', index === undefined ? undefined : [index]);
        return;
      }
      await job.updateData({ ...job.data, errors });
      throw error;
    }
  }

  /** BullMQ gave up on a unit (only past limits no outage reaches): end its items failed, hold released. */
  private async onFailed(job: Job<MediaJobData> | undefined, error: Error): Promise<void> {
    if (!job) return;
    const { jobId, index } = job.data;
    const final = job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled more than/.test(error.message);
    if (!final) return;
    const code = isUnavailableError(error) ? 'upstream_error' : 'processing_failed';
    this.logger.error({ job_id: jobId, item: index, attempt: job.attemptsMade, code, err: error }, 'the queue gave up');
    await this.ending
      .fail(jobId, code, index === undefined ? undefined : [index])
      // A segment the queue gave up on failed its item: its temporary segments go.
      .then(() =>
        job.data.segment !== undefined && index !== undefined ? this.segmentFiles.remove(jobId, index) : undefined,
      )
      .catch((failure: unknown) => {
        // The item stays open and the job keeps its hold; the reconciler fails it once it has gone stale.
        this.logger.error({ job_id: jobId, item: index, err: failure }, 'could not fail work the queue gave up on');
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
      for (const job of page) await this.reconcileOne(job);
      if (page.length < RECONCILE_PAGE) return;
      afterId = page[page.length - 1].id;
    }
  }

  /**
   * A stale open job: one whose own unit the queue gave up on fails as a whole; a queued job whose
   * unit is lost is queued again; an open item whose unit is lost is queued again, and one whose unit
   * the queue gave up on (or finished without ending it) fails — the last item to end ends the job.
   */
  private async reconcileOne(job: { id: string; status: string; open_items: number[] }): Promise<void> {
    const jobUnit = await this.unitState(job.id);
    if (jobUnit === 'failed') {
      await this.ending.fail(job.id, 'upstream_error');
      return;
    }
    if (job.status === 'queued' && jobUnit !== 'missing') return;
    const lost: number[] = [];
    const gaveUp: number[] = [];
    for (const index of job.open_items) {
      const state = await this.unitState(mediaItemUnitId(job.id, index));
      if (state === 'missing') lost.push(index);
      else if (state === 'failed' || state === 'completed') gaveUp.push(index);
    }
    if (job.status === 'queued' && lost.length === job.open_items.length) await enqueueMediaJob(this.queue!, job.id);
    else await enqueueMediaItems(this.queue!, job.id, lost);
    if (gaveUp.length) await this.ending.fail(job.id, 'upstream_error', gaveUp);
  }

  private async unitState(id: string): Promise<'missing' | 'failed' | 'completed' | 'other'> {
    const unit = await this.queue!.getJob(id);
    const state = unit ? await unit.getState() : 'unknown';
    if (state === 'unknown') return 'missing';
    return state === 'failed' || state === 'completed' ? state : 'other';
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
