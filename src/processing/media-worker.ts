import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { isUnavailableError } from '../common/errors/classify';
import { QueueOwner } from '../queues/queue-owner';
import { PROCESS_ITEM, PROCESS_SEGMENT, type MediaJobData } from '../queues/catalogue';
import { enqueueMediaItems, enqueueMediaSegments } from '../queues/enqueue';
import { MEDIA_JOB_MAX_ERRORS } from '../queues/retry-policy';
import { ItemEnding } from './item-ending';
import { ProcessingRepository } from './processing.repository';
import { SegmentFiles } from './segment-files';
import { CancelListener } from './upkeep/cancel-listener';
import { WorkerHeartbeat } from './upkeep/worker-heartbeat';
import { EncodeSegment } from './usecases/encode-segment/encode-segment.usecase';
import { RunItem } from './usecases/run-item/run-item.usecase';
import { WorkerStopping } from './worker-stopping';

/**
 * The worker process's media queue consumer for its region. A job's unit (process-job) queues its
 * items as units of their own (process-item), which this and every other worker of the region run in
 * parallel; a long item's segments likewise (process-segment). What keeps it honest runs beside it,
 * each its own class in upkeep/: the heartbeat (region health), the cancel listener (kills running
 * media processes), the reconciler (work the queue lost or gave up on), and the purge and sweeper.
 */
@Injectable()
export class MediaWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MediaWorker.name);
  private worker?: Worker<MediaJobData>;
  /** Aborted (with WorkerStopping) as the worker stops: a running source download hands its unit back. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly runItem: RunItem,
    private readonly encodeSegment: EncodeSegment,
    private readonly ending: ItemEnding,
    private readonly segmentFiles: SegmentFiles,
    private readonly repository: ProcessingRepository,
    private readonly queues: QueueOwner,
    private readonly cancels: CancelListener,
    private readonly heartbeat: WorkerHeartbeat,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = this.queues.worker(
      'media',
      {
        'process-job': (job) => this.unit(job, () => this.fanOut(job)),
        'process-item': (job) => this.unit(job, () => this.handleItem(job)),
        'process-segment': (job) => this.unit(job, () => this.handleSegment(job)),
      },
      'MediaWorker',
    );
    this.worker.on('failed', (job, error) => void this.onFailed(job, error));
  }

  /**
   * SIGTERM: stop taking jobs and let running media work finish; a source download still running is
   * stopped and its unit handed back to the queue (it could hold the worker up to the job's time limit).
   * Before the shutdown hooks, so the heartbeat leaves the region and the cancel listener stops only once
   * nothing runs here any more, and PostgreSQL is still open for the running items' endings.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort(new WorkerStopping());
    if (this.worker) await this.queues.stopWorker(this.worker);
  }

  /** A job's unit: queue each of its open items as a unit of its own (a no-op for one already queued). */
  private async fanOut(job: Job<MediaJobData>): Promise<void> {
    const open = await this.repository.openItems(job.data.jobId);
    if (open.length === 0) return;
    // Each item is weighed for its account's fair share of the region's workers (queues/fair-share.ts).
    const owner = await this.repository.jobOwner(job.data.jobId);
    await enqueueMediaItems(this.queues.sink('media', 'worker'), job.data.jobId, open, owner);
  }

  private async handleItem(job: Job<MediaJobData>): Promise<void> {
    const { jobId, index } = job.data;
    if (index === undefined) throw new Error(`${PROCESS_ITEM} unit ${job.id} has no item index`);
    const split = await this.cancels.whileRunning(jobId, (controller) =>
      this.runItem.execute({
        jobId,
        index,
        worker: this.heartbeat.id,
        signal: controller.signal,
        stopping: this.stopping.signal,
        abort: () => controller.abort(),
      }),
    );
    // A long item was split: each segment is a unit of its own, for any worker of the region.
    if (split) {
      const owner = { account: job.data.account, plan: job.data.plan };
      await enqueueMediaSegments(this.queues.sink('media', 'worker'), jobId, index, split.segments, owner);
    }
  }

  private async handleSegment(job: Job<MediaJobData>): Promise<void> {
    const { jobId, index, segment } = job.data;
    if (index === undefined || segment === undefined) {
      throw new Error(`${PROCESS_SEGMENT} unit ${job.id} has no item index or segment`);
    }
    await this.cancels.whileRunning(jobId, (controller) =>
      this.encodeSegment.execute({
        jobId,
        index,
        segment,
        worker: this.heartbeat.id,
        signal: controller.signal,
        abort: () => controller.abort(),
      }),
    );
  }

  /**
   * Runs a unit. An attempt that fails because PostgreSQL or Redis is unreachable, or that the worker's
   * stop handed back (WorkerStopping), goes back to BullMQ to be tried again later (never counted
   * against the work); any other error is the unit's own, and after MEDIA_JOB_MAX_ERRORS of them its
   * items fail as processing_failed.
   */
  private async unit(job: Job<MediaJobData>, work: () => Promise<void>): Promise<void> {
    const { jobId, index } = job.data;
    try {
      await work();
    } catch (error) {
      if (error instanceof WorkerStopping) {
        this.logger.log({ job_id: jobId, item: index }, 'the worker is stopping; the unit goes back to the queue');
        throw error;
      }
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
}
