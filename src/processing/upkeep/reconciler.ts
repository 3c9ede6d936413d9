// What the queue lost or gave up on, found from the database: every WORKER_RECONCILE_MS, open jobs of
// this region untouched for WORKER_STALE_JOB_SECONDS are checked against their queue units. A lost
// unit (Redis restarted, flushed) is queued again; one the queue gave up on fails its work as
// upstream_error, releasing the hold.
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../common/config/config';
import { PeriodicTask } from '../../common/periodic';
import { QueueOwner } from '../../queues/queue-owner';
import { mediaItemUnitId } from '../../queues/catalogue';
import { enqueueMediaItems, enqueueMediaJob } from '../../queues/enqueue';
import { ItemEnding } from '../item-ending';
import { ProcessingRepository } from '../processing.repository';

const RECONCILE_PAGE = 100;

@Injectable()
export class Reconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task = new PeriodicTask('reconciler', new Logger(Reconciler.name), () => this.reconcile());

  constructor(
    private readonly repository: ProcessingRepository,
    private readonly ending: ItemEnding,
    private readonly queues: QueueOwner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.task.start(this.config.workerReconcileMs);
  }

  beforeApplicationShutdown(): void {
    this.task.stop();
  }

  /** Every stale open job of this region, a page at a time (a long waiting queue must not hide the rest). */
  async reconcile(): Promise<void> {
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
  private async reconcileOne(job: {
    id: string;
    status: string;
    open_items: number[];
    account: string;
    plan: string;
  }): Promise<void> {
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
    const sink = this.queues.sink('media', 'worker');
    if (job.status === 'queued' && lost.length === job.open_items.length) await enqueueMediaJob(sink, job.id);
    // Queued again with their account's fair-share priority, as the fan-out would (queues/fair-share.ts).
    else await enqueueMediaItems(sink, job.id, lost, { account: job.account, plan: job.plan });
    if (gaveUp.length) await this.ending.fail(job.id, 'upstream_error', gaveUp);
  }

  private async unitState(id: string): Promise<'missing' | 'failed' | 'completed' | 'other'> {
    const unit = await this.queues.queue('media', 'worker').getJob(id);
    const state = unit ? await unit.getState() : 'unknown';
    if (state === 'unknown') return 'missing';
    return state === 'failed' || state === 'completed' ? state : 'other';
  }
}
