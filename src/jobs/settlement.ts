// The money of a job's ending: what each item costs from its result (planItem, the worker's side), how
// the job ends once every item has (planJobEnd, which JobLifecycle.endItems calls under the job's lock),
// what a cancel charges (planCancel, JobLifecycle.cancel) and what the hold becomes (billingStateAtEnd).
// Pure, so the rules of docs/api-decisions.md §4 are unit-tested; the lifecycle settles the hold with
// billing's HoldsRepository (src/billing/holds.repository.ts).
import { type ErrorCode, type ErrorObject, toErrorObject } from '../common/errors';
import type { JobEvent } from '../webhooks/outbox.writer';
import type { BillingState, EndStatus, ItemStatus, JobApi, JobStatus } from './job.types';
import { itemCredits, sumCredits } from './pricing';

/** The webhook event each ending writes to the outbox. */
export const EVENT_AT_END: Record<EndStatus, JobEvent> = {
  succeeded: 'job.succeeded',
  partially_succeeded: 'job.partially_succeeded',
  failed: 'job.failed',
  cancelled: 'job.cancelled',
};

export type ItemResult =
  | {
      index: number;
      ok: true;
      processedSeconds: number;
      outputPixels: number;
      /** An HLS package's renditions as made, each priced as a picture (pricing.ts sumCredits); absent for a file. */
      rungs?: { width: number; height: number }[];
    }
  | { index: number; ok: false; code: ErrorCode; message?: string; details?: Record<string, unknown> };

/** An item's money at its end: planned by the worker (planItem), read back under the job's lock (planJobEnd). */
export interface SettledItem {
  index: number;
  status: 'succeeded' | 'failed';
  estimatedCredits: number;
  chargedCredits: number;
  processedSeconds: number;
  error: ErrorObject | null;
}

export interface SettlementPlan {
  status: Extract<JobStatus, 'succeeded' | 'partially_succeeded' | 'failed'>;
  chargedCredits: number;
  processedSeconds: number;
  items: SettledItem[];
  error: ErrorObject | null;
  event: JobEvent;
}

export function planSettlement(
  job: { api: JobApi; requestId: string },
  items: { index: number; estimatedCredits: number }[],
  results: ItemResult[],
  docsUrl: string,
): SettlementPlan {
  const plans = items.map((item) =>
    planItem(
      job,
      item,
      results.find((candidate) => candidate.index === item.index),
      docsUrl,
    ),
  );
  return planJobEnd(job, plans, docsUrl);
}

/** What one item costs and which error it carries, from its result (none: it failed unexplained). */
export function planItem(
  job: { api: JobApi; requestId: string },
  item: { index: number; estimatedCredits: number },
  result: ItemResult | undefined,
  docsUrl: string,
): SettledItem {
  const context = { requestId: job.requestId, docsUrl };
  if (!result || !result.ok) {
    const code: ErrorCode = result && !result.ok ? result.code : 'processing_failed';
    return {
      index: item.index,
      status: 'failed',
      estimatedCredits: item.estimatedCredits,
      chargedCredits: 0,
      processedSeconds: 0,
      error: toErrorObject(code, context, {
        message: result && !result.ok ? result.message : undefined,
        param: `inputs[${item.index}]`,
        details: result && !result.ok ? result.details : undefined,
      }),
    };
  }
  // Actual usage, never more than the estimate that was held.
  const actual = result.rungs
    ? sumCredits(result.processedSeconds, result.rungs)
    : itemCredits(job.api, result.processedSeconds, result.outputPixels);
  return {
    index: item.index,
    status: 'succeeded',
    estimatedCredits: item.estimatedCredits,
    chargedCredits: Math.min(actual, item.estimatedCredits),
    processedSeconds: result.processedSeconds,
    error: null,
  };
}

/** How a job ends once every item has: its status, what it costs and its error (docs/api-decisions.md §4). */
export function planJobEnd(
  job: { api: JobApi; requestId: string },
  plans: SettledItem[],
  docsUrl: string,
): SettlementPlan {
  const context = { requestId: job.requestId, docsUrl };
  const failed = plans.filter((plan) => plan.status === 'failed');
  const chargedCredits = plans.reduce((sum, plan) => sum + plan.chargedCredits, 0);
  const processedSeconds = plans.reduce((sum, plan) => sum + plan.processedSeconds, 0);
  if (failed.length === 0) {
    return {
      status: 'succeeded',
      chargedCredits,
      processedSeconds,
      items: plans,
      error: null,
      event: EVENT_AT_END.succeeded,
    };
  }
  const first = failed[0].error!;
  if (failed.length === plans.length) {
    // The job failed as a whole: its error is the first item's cause; nothing is charged.
    return {
      status: 'failed',
      chargedCredits: 0,
      processedSeconds,
      items: plans,
      error: first,
      event: EVENT_AT_END.failed,
    };
  }
  const error = toErrorObject(first.code as ErrorCode, context, {
    message: `${failed.length} of ${plans.length} items failed; the first failed with: ${first.message} You were charged only for the items that succeeded.`,
    param: first.param,
    details: {
      items: plans.map((plan) => ({
        index: plan.index,
        status: plan.status,
        estimated_credits: plan.estimatedCredits,
        charged_credits: plan.chargedCredits,
        error_code: plan.error?.code ?? null,
      })),
      succeeded_items: plans.length - failed.length,
      failed_items: failed.length,
      estimated_credits: plans.reduce((sum, plan) => sum + plan.estimatedCredits, 0),
      charged_credits: chargedCredits,
    },
  });
  return {
    status: 'partially_succeeded',
    chargedCredits,
    processedSeconds,
    items: plans,
    error,
    event: EVENT_AT_END.partially_succeeded,
  };
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

/**
 * A cancel's money: the items that succeeded before it were delivered and are charged what each was
 * (their charges and seconds, as their endings wrote them); its open items are cancelled and cost nothing.
 */
export function planCancel(items: { status: ItemStatus; chargedCredits: number; processedSeconds: number }[]): {
  status: 'cancelled';
  chargedCredits: number;
  processedSeconds: number;
} {
  const delivered = items.filter((item) => item.status === 'succeeded');
  return {
    status: 'cancelled',
    chargedCredits: delivered.reduce((sum, item) => sum + item.chargedCredits, 0),
    processedSeconds: delivered.reduce((sum, item) => sum + item.processedSeconds, 0),
  };
}
