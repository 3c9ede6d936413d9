// The one owner of a job's status (docs/api-decisions.md §4). Every change of `jobs.status` and `job_items.status`
// goes through this file: the tables below are the whole state machine, and each UPDATE that moves a
// job is given its allowed "from" statuses from them (the SQL is in job-lifecycle.repository.ts), so
// no code path can move a job along a path the tables do not list. Money moves through billing's holds, inside the
// same transaction as the status change that causes it.
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { settleHold, type HoldSettlement } from '../billing/holds';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError, toErrorObject, type ErrorObject } from '../common/errors';
import { jobClaimed, jobEnded, type EndedJob } from '../metrics/job-metrics';
import { OutboxWriter, type EventItem } from '../webhooks/outbox.writer';
import type {
  BillingState,
  EndStatus,
  ItemCheck,
  ItemOutput,
  ItemPhase,
  ItemStatus,
  JobItemRow,
  JobRow,
  JobStatus,
} from './job.types';
import { JobLifecycleRepository, type NewAsset } from './job-lifecycle.repository';
import { EVENT_AT_END, planJobEnd, type SettlementPlan } from './settlement';

export type Actor = 'api' | 'worker';

/** Who may move a job from which statuses to which, and when. Terminal statuses have no way out. */
export const JOB_TRANSITIONS: readonly { from: readonly JobStatus[]; to: JobStatus; by: Actor; when: string }[] = [
  { from: ['queued'], to: 'processing', by: 'worker', when: 'a worker takes the first of its items' },
  {
    from: ['processing'],
    to: 'processing',
    by: 'worker',
    when: 'a worker takes another of its items, or one again after a worker died',
  },
  { from: ['processing'], to: 'succeeded', by: 'worker', when: 'its last item ended, every item succeeded' },
  { from: ['processing'], to: 'partially_succeeded', by: 'worker', when: 'its last item ended, some items failed' },
  {
    from: ['processing'],
    to: 'failed',
    by: 'worker',
    when: 'its last item ended, every item failed; or the queue gave up on the job',
  },
  {
    from: ['queued', 'processing'],
    to: 'cancelled',
    by: 'api',
    when: 'the client cancels (processing: within the window)',
  },
];

/**
 * The same for a job's items. Each item is its own unit of queue work and ends on its own; the
 * transaction that ends a job's last item ends the job too. A cancel ends the job and its open items.
 */
export const ITEM_TRANSITIONS: readonly { from: readonly ItemStatus[]; to: ItemStatus }[] = [
  { from: ['queued', 'processing'], to: 'processing' },
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

/**
 * "Open": a status the tables list a way out of (queued, processing); the others are terminal. Every
 * query that asks for open jobs or items takes these as a parameter rather than spelling them out.
 */
export function openJobStatuses(): JobStatus[] {
  return [...new Set(JOB_TRANSITIONS.flatMap((rule) => rule.from))];
}

/** The same for items (and for an item's segments, whose statuses are an item's without `cancelled`). */
export function openItemStatuses(): ItemStatus[] {
  return [...new Set(ITEM_TRANSITIONS.flatMap((rule) => rule.from))];
}

/**
 * What a job's hold becomes when it ends (the database's jobs_terminal_billing constraint agrees): a
 * job that succeeded, fully or partly, is settled; a failed one released. A cancelled job pays for the
 * items delivered before the cancel — their outputs stay downloadable, so giving them away would make
 * every finished item of a job free by cancelling it — and is settled when that is anything (its hold
 * captured for that, the rest released), else released.
 */
export function billingStateAtEnd(status: EndStatus, chargedCredits: number): BillingState {
  if (status === 'succeeded' || status === 'partially_succeeded') return 'settled';
  return status === 'cancelled' && chargedCredits > 0 ? 'settled' : 'released';
}

/** How one item ended; `asset` is the output it produced, stored in the same transaction. */
export interface ItemEnding {
  index: number;
  status: Extract<ItemStatus, 'succeeded' | 'failed'>;
  chargedCredits: number;
  processedSeconds: number;
  error: ErrorObject | null;
  asset: Omit<NewAsset, 'id' | 'accountId' | 'jobId' | 'index' | 'retentionDays'> | null;
  /** The output's checks (omitted: the item ended without an output to check; the column stays as it is). */
  checks?: ItemCheck[];
}

/** What an endItems call did: which of its items it ended, and how the job ended when it did (planJobEnd). */
export interface ItemsEnded {
  itemsEnded: number[];
  jobEnded: boolean;
  /** The job's ending, when this call ended it: its status, money and the items as they ended. */
  ending?: SettlementPlan;
}

@Injectable()
export class JobLifecycle {
  constructor(
    private readonly repository: JobLifecycleRepository,
    private readonly outbox: OutboxWriter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * queued → processing (or processing again) for a job that cannot be run (the queue gave up on it),
   * so endItems can fail it; null when the job already ended.
   */
  claim(jobId: string): Promise<{ job: JobRow; items: JobItemRow[] } | null> {
    return this.repository.claim(jobId, jobStatusesLeadingTo('processing'));
  }

  /**
   * A worker takes one item: the item → processing (recording the worker), its job → processing
   * (started_at set by the first). Null when the job or the item has already ended.
   */
  async takeItem(jobId: string, index: number, worker: string): Promise<{ job: JobRow; item: JobItemRow } | null> {
    const taken = await this.repository.takeItem(jobId, index, worker, {
      job: jobStatusesLeadingTo('processing'),
      item: itemStatusesLeadingTo('processing'),
    });
    if (taken) jobClaimed(taken.job);
    return taken;
  }

  /** What a processing item is doing now (items[i].phase): encoding, joining or storing. */
  reportPhase(jobId: string, index: number, phase: ItemPhase): Promise<void> {
    return this.repository.phase(jobId, index, phase);
  }

  /** An item's progress, the job's overall progress and liveness; false once the job is no longer processing. */
  reportProgress(jobId: string, index: number, fraction: number): Promise<boolean> {
    return this.repository.progress(jobId, index, fraction, openItemStatuses());
  }

  /**
   * Ends items of a processing job in one transaction that holds the job's row lock, and — when no
   * item of the job is left open — ends the job in the same transaction: its status and error, the
   * hold settled (charged at most what was held) or released, and the outbox event.
   *
   * Exactly once: every transaction that ends an item (or cancels the job) first locks the job row,
   * so they run one after another; each sees the items the ones before it ended, so only the one that
   * ends the last open item finds none left and ends the job. The job's flip from `billing_state`
   * 'authorised' is the second guard: a duplicated or retried worker ends nothing twice. An item
   * that already ended (or whose job ended) is left as it is, and its output is not stored.
   */
  async endItems(job: JobRow, endings: ItemEnding[]): Promise<ItemsEnded> {
    const settling = performance.now();
    let metrics: EndedJob | undefined;
    const result = await this.repository.transaction(async (manager): Promise<ItemsEnded> => {
      const locked = await this.repository.lock(manager, job.id);
      if (!locked || locked.billing_state !== 'authorised' || locked.status !== 'processing') {
        return { itemsEnded: [], jobEnded: false };
      }
      const itemsEnded: number[] = [];
      for (const item of endings) {
        const written = await this.repository.endItem(manager, job.id, {
          ...item,
          from: itemStatusesLeadingTo(item.status),
        });
        if (!written) continue;
        itemsEnded.push(item.index);
        if (item.asset && item.status === 'succeeded') {
          const assetId = await this.repository.insertAsset(manager, {
            ...item.asset,
            accountId: job.account_id,
            jobId: job.id,
            index: item.index,
            retentionDays: this.config.jobRetentionDays,
          });
          const lightMap = item.asset.lightMap;
          const lightMapId = lightMap
            ? await this.repository.insertAsset(manager, {
                ...lightMap,
                container: 'png',
                contentType: 'image/png',
                media: {},
                accountId: job.account_id,
                jobId: job.id,
                index: item.index,
                retentionDays: this.config.jobRetentionDays,
              })
            : null;
          const output: ItemOutput = {
            asset_id: assetId,
            size_bytes: item.asset.sizeBytes,
            container: item.asset.container,
            ...outputMedia(job.api, item.asset.media),
            ...(lightMapId
              ? { light_map_asset_id: lightMapId, light_map_frame_seconds: lightMap?.frameSeconds ?? null }
              : {}),
          };
          await this.repository.setItemOutput(manager, job.id, item.index, output);
        }
      }
      const items = await this.repository.itemEndings(manager, job.id);
      const open = openItemStatuses();
      if (items.some((item) => open.includes(item.status))) {
        await this.repository.updateProgress(manager, job.id, open);
        return { itemsEnded, jobEnded: false };
      }
      const ending = planJobEnd(
        { api: job.api, requestId: job.request_id },
        items.map((item) => ({ ...item, status: item.status === 'succeeded' ? 'succeeded' : 'failed' })),
        this.config.docsUrl,
      );
      const ended = await this.endJob(manager, job.id, {
        status: ending.status,
        chargedCredits: ending.chargedCredits,
        processedSeconds: ending.processedSeconds,
        error: ending.error,
      });
      // Locked above and found open and authorised, so this flip cannot miss; if it ever does, roll back.
      if (!ended) throw new Error(`job ${job.id} could not be ended although it was locked open`);
      await this.outbox.write(manager, {
        accountId: job.account_id,
        jobId: job.id,
        event: ending.event,
        error: ending.error,
        items: eventItems(items),
      });
      metrics = { ...ending, api: job.api, startedAt: locked.started_at, items, settlementStartedAt: settling };
      return { itemsEnded, jobEnded: true, ending };
    });
    // Counted once committed (a rolled-back attempt is retried and counted then).
    if (metrics) jobEnded(metrics);
    return result;
  }

  /**
   * The client's cancel: allowed while queued, or while processing within the cancel window. The job
   * ends here in one transaction (status, items, settlement of the hold, job.cancelled event); a worker
   * still running it finds it ended and drops its work. Its open items are cancelled and cost nothing;
   * the items that succeeded before it were delivered (their outputs stay downloadable) and are
   * charged: the job's charge is theirs, captured from the hold in its one settlement, the rest released.
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
      await this.repository.cancelItems(manager, jobId, itemStatusesLeadingTo('cancelled'));
      const items = await this.repository.itemEndings(manager, jobId);
      const delivered = items.filter((item) => item.status === 'succeeded');
      const ended = await this.endJob(manager, jobId, {
        status: 'cancelled',
        chargedCredits: delivered.reduce((sum, item) => sum + item.chargedCredits, 0),
        processedSeconds: delivered.reduce((sum, item) => sum + item.processedSeconds, 0),
        error,
      });
      // Locked above and found open, so this flip cannot miss; if it ever does, nothing has moved.
      if (!ended) throw new ApiError('job_not_cancellable', { param: 'job_id', details: { status: job.status } });
      await this.outbox.write(manager, {
        accountId: job.account_id,
        jobId,
        event: EVENT_AT_END.cancelled,
        error,
        items: eventItems(items),
      });
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

  /**
   * Every ending of a job (its last item's settlement, a failure, the reconciler's, a cancel) comes
   * here, in the transaction that holds the job's row lock: the status flip, then the hold settled
   * or released (which takes the account's row lock), then the job's processing seconds moved from
   * its estimate to its processed time in the account's usage (written under that lock, as
   * src/billing/usage-days.ts requires). Null when the job had already ended: nothing moved.
   */
  private async endJob(
    manager: EntityManager,
    jobId: string,
    ending: { status: EndStatus; chargedCredits: number; processedSeconds: number; error: ErrorObject | null },
  ): Promise<HoldSettlement | null> {
    const ended = await this.repository.endJob(manager, jobId, {
      ...ending,
      from: jobStatusesLeadingTo(ending.status),
      billingState: billingStateAtEnd(ending.status, ending.chargedCredits),
    });
    if (!ended) return null;
    const { seconds, ...hold } = ended;
    await settleHold(manager, hold);
    await this.repository.addEndedSeconds(manager, seconds);
    return hold;
  }
}

/** The measured media of an output as the job view shows it: audio, a video file, or a package's renditions. */
function outputMedia(api: JobRow['api'], media: Record<string, unknown>): Partial<ItemOutput> {
  if (api === 'audio') return { audio: media };
  return Array.isArray(media.renditions)
    ? { renditions: media.renditions as Record<string, unknown>[] }
    : { video: media };
}

/** What each item made, as measured, its charge and its checks: a receiver need not read the job for them. */
function eventItems(items: Awaited<ReturnType<JobLifecycleRepository['itemEndings']>>): EventItem[] {
  return items.map((item) => ({
    index: item.index,
    status: item.status,
    charged_credits: item.chargedCredits,
    output: item.output,
    checks: item.checks,
  }));
}
