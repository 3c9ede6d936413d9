// The money of a job's ending: what each item costs from its result (planItem, the worker's side) and how
// the job ends once every item has (planJobEnd, which JobLifecycle.endItems calls under the job's lock).
// Pure, so the rules of docs/api-decisions.md §4 are unit-tested; the hold it settles is billing/holds.ts.
import { type ErrorCode, type ErrorObject, toErrorObject } from '../common/errors';
import type { JobEvent } from '../webhooks/outbox.writer';
import type { EndStatus, JobApi, JobStatus } from './job.types';
import { itemCredits } from './pricing';

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
      /** A package's rungs' pixels: each rung is priced as a picture of its own, summed (issue 41). */
      rungPixels?: number[];
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
  const actual = result.rungPixels
    ? result.rungPixels.reduce((sum, pixels) => sum + itemCredits(job.api, result.processedSeconds, pixels), 0)
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
