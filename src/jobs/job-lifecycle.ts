// The one owner of a job's status (API.md §4). Every change of `jobs.status` and `job_items.status`
// goes through this file: the tables below are the whole state machine, and each UPDATE that moves a
// job is given its allowed "from" statuses from them (the SQL is in job-lifecycle.repository.ts), so
// no code path can move a job along a path the tables do not list. Money moves through billing's holds, inside the
// same transaction as the status change that causes it.
import { Inject, Injectable } from '@nestjs/common';
import { settleHold } from '../billing/holds';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError, toErrorObject, type ErrorObject } from '../common/errors';
import { jobClaimed, jobEnded } from '../metrics/job-metrics';
import { OutboxWriter, type JobEvent } from '../webhooks/outbox.writer';
import type { BillingState, ItemOutput, ItemStatus, JobItemRow, JobRow, JobStatus } from './job.types';
import { JobLifecycleRepository, type NewAsset } from './job-lifecycle.repository';

export type Actor = 'api' | 'worker';

/** Who may move a job from which statuses to which, and when. Terminal statuses have no way out. */
export const JOB_TRANSITIONS: readonly { from: readonly JobStatus[]; to: JobStatus; by: Actor; when: string }[] = [
  { from: ['queued'], to: 'processing', by: 'worker', when: 'a worker takes the job from the queue' },
  { from: ['processing'], to: 'processing', by: 'worker', when: 'a worker takes it again after one died' },
  { from: ['processing'], to: 'succeeded', by: 'worker', when: 'every item succeeded' },
  { from: ['processing'], to: 'partially_succeeded', by: 'worker', when: 'some items failed' },
  { from: ['processing'], to: 'failed', by: 'worker', when: 'every item failed, or the queue gave up on the job' },
  {
    from: ['queued', 'processing'],
    to: 'cancelled',
    by: 'api',
    when: 'the client cancels (processing: within the window)',
  },
];

/** The same for a job's items; an item ends when its job ends, in the same transaction. */
export const ITEM_TRANSITIONS: readonly { from: readonly ItemStatus[]; to: ItemStatus }[] = [
  { from: ['queued'], to: 'processing' },
  { from: ['queued', 'processing'], to: 'succeeded' },
  { from: ['queued', 'processing'], to: 'failed' },
  { from: ['queued', 'processing'], to: 'cancelled' },
];

/** The statuses a job may be in to move to `to` (empty: no path leads there). */
export function jobStatusesLeadingTo(to: JobStatus): JobStatus[] {
  return [...new Set(JOB_TRANSITIONS.filter((rule) => rule.to === to).flatMap((rule) => rule.from))];
}

export function itemStatusesLeadingTo(to: ItemStatus): ItemStatus[] {
  return [...new Set(ITEM_TRANSITIONS.filter((rule) => rule.to === to).flatMap((rule) => rule.from))];
}

export type EndStatus = Extract<JobStatus, 'succeeded' | 'partially_succeeded' | 'failed' | 'cancelled'>;

/** What a job's hold becomes when it ends (the database's jobs_terminal_billing constraint agrees). */
export const BILLING_STATE_AT_END: Record<EndStatus, BillingState> = {
  succeeded: 'settled',
  partially_succeeded: 'settled',
  failed: 'released',
  cancelled: 'released',
};

/** The webhook event each ending writes to the outbox. */
export const EVENT_AT_END: Record<EndStatus, JobEvent> = {
  succeeded: 'job.succeeded',
  partially_succeeded: 'job.partially_succeeded',
  failed: 'job.failed',
  cancelled: 'job.cancelled',
};

/** How one item ended; `asset` is the output it produced, stored in the same transaction. */
export interface ItemEnding {
  index: number;
  status: Extract<ItemStatus, 'succeeded' | 'failed'>;
  chargedCredits: number;
  processedSeconds: number;
  error: ErrorObject | null;
  asset: Omit<NewAsset, 'id' | 'accountId' | 'jobId' | 'index' | 'retentionDays'> | null;
}

/** How the worker ends a job: its status, what it costs (capped at the hold) and each item's result. */
export interface JobEnding {
  status: Exclude<EndStatus, 'cancelled'>;
  chargedCredits: number;
  processedSeconds: number;
  error: ErrorObject | null;
  items: ItemEnding[];
}

@Injectable()
export class JobLifecycle {
  constructor(
    private readonly repository: JobLifecycleRepository,
    private readonly outbox: OutboxWriter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** queued → processing (or processing again after a crash); null when the job already ended. */
  async claim(jobId: string): Promise<{ job: JobRow; items: JobItemRow[] } | null> {
    const claimed = await this.repository.claim(jobId, jobStatusesLeadingTo('processing'));
    if (claimed) jobClaimed(claimed.job);
    return claimed;
  }

  itemStarted(jobId: string, index: number): Promise<void> {
    return this.repository.itemStarted(jobId, index, itemStatusesLeadingTo('processing'));
  }

  /** Progress and liveness of a processing job; false once it is no longer processing. */
  reportProgress(jobId: string, progress: number): Promise<boolean> {
    return this.repository.progress(jobId, progress);
  }

  /**
   * Ends a processing job in one transaction: its status and error, each item and its output, the
   * hold settled (charged at most what was held) or released, and the outbox event. Only the
   * transaction that flips `billing_state` from 'authorised' does anything, so a retried or
   * duplicated worker ends a job — and moves its money — at most once. False when it had ended already.
   */
  async end(job: JobRow, ending: JobEnding): Promise<boolean> {
    const settling = performance.now();
    const ended = await this.repository.transaction(async (manager) => {
      const ended = await this.repository.endJob(manager, job.id, {
        status: ending.status,
        from: jobStatusesLeadingTo(ending.status),
        billingState: BILLING_STATE_AT_END[ending.status],
        chargedCredits: ending.chargedCredits,
        processedSeconds: ending.processedSeconds,
        error: ending.error,
      });
      if (!ended) return false;
      await settleHold(manager, ended);
      for (const item of ending.items) {
        let output: ItemOutput | null = null;
        if (item.asset && item.status === 'succeeded') {
          const assetId = await this.repository.insertAsset(manager, {
            ...item.asset,
            accountId: job.account_id,
            jobId: job.id,
            index: item.index,
            retentionDays: this.config.jobRetentionDays,
          });
          output = {
            asset_id: assetId,
            size_bytes: item.asset.sizeBytes,
            container: item.asset.container,
            ...(job.api === 'audio' ? { audio: item.asset.media } : { video: item.asset.media }),
          };
        }
        await this.repository.endItem(manager, job.id, { ...item, from: itemStatusesLeadingTo(item.status), output });
      }
      await this.outbox.write(manager, {
        accountId: job.account_id,
        jobId: job.id,
        event: EVENT_AT_END[ending.status],
        error: ending.error,
      });
      return true;
    });
    if (ended) jobEnded({ ...ending, api: job.api, startedAt: job.started_at, settlementStartedAt: settling });
    return ended;
  }

  /**
   * The client's cancel: allowed while queued, or while processing within the cancel window. The job
   * ends here in one transaction (status, items, release of the hold, job.cancelled event); a worker
   * still running it finds it ended and drops its work.
   */
  async cancel(jobId: string): Promise<JobRow> {
    const cancelled = await this.repository.transaction(async (manager) => {
      const job = await this.repository.lock(manager, jobId);
      if (!job) throw new ApiError('job_not_found', { param: 'job_id' });
      const windowEnds = job.started_at ? job.started_at.getTime() + this.config.cancelWindowSeconds * 1000 : Infinity;
      const cancellable = jobStatusesLeadingTo('cancelled').includes(job.status);
      if (!cancellable || (job.status === 'processing' && Date.now() > windowEnds)) {
        throw new ApiError('job_not_cancellable', {
          param: 'job_id',
          details: { status: job.status, cancel_window_seconds: this.config.cancelWindowSeconds },
        });
      }
      const error = toErrorObject(
        'job_cancelled',
        { requestId: job.request_id, docsUrl: this.config.docsUrl },
        {
          message:
            'The job was cancelled by the client. Stop polling it; submit a new job if you still need the result.',
        },
      );
      const ended = await this.repository.endJob(manager, jobId, {
        status: 'cancelled',
        from: jobStatusesLeadingTo('cancelled'),
        billingState: BILLING_STATE_AT_END.cancelled,
        chargedCredits: 0,
        processedSeconds: null,
        error,
      });
      // Locked above and found open, so this flip cannot miss; if it ever does, nothing has moved.
      if (!ended) throw new ApiError('job_not_cancellable', { param: 'job_id', details: { status: job.status } });
      await settleHold(manager, ended);
      await this.repository.cancelItems(manager, jobId, itemStatusesLeadingTo('cancelled'));
      await this.outbox.write(manager, { accountId: job.account_id, jobId, event: EVENT_AT_END.cancelled, error });
      return job;
    });
    jobEnded({
      api: cancelled.api,
      status: 'cancelled',
      error: { code: 'job_cancelled' },
      startedAt: cancelled.started_at,
      items: [],
    });
    return cancelled;
  }
}
