// Step 8 of docs/api-decisions.md §2, "limits and money", in the order the contract fixes: quota, concurrency, spend
// cap, balance (the credit hold itself), queue depth. It runs inside the submit's transaction with
// the account row locked, so concurrent submits of one account see each other's holds and jobs.
import { Inject, Injectable } from '@nestjs/common';
import type { Transaction } from '../common/database/pg-transaction';
import type { AuthContext } from '../auth/auth-context';
import { billingPeriod, type BillingPeriod } from '../billing/billing-period';
import { creditsMicroUsd, fromMicroUsd, toMicroUsd } from '../billing/micro-usd';
import { authoriseHold, availableCredits, type LockedAccount } from '../billing/holds';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { JobsRepository } from './jobs.repository';

/** What a new job asks of the account's limits. */
export interface LimitsRequest {
  jobId: string;
  region: string;
  estimatedCredits: number;
  estimatedSeconds: number;
}

/** The same without a job: what an estimate asks (no hold is taken). */
export type LimitsLook = Omit<LimitsRequest, 'jobId'>;

@Injectable()
export class SubmitLimits {
  constructor(
    private readonly jobs: JobsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Checks every limit and takes the job's credit hold, or throws the first limit exceeded. The
   * caller's transaction must hold the account's row lock (`lockAccount`) and roll back on a throw,
   * which also undoes the hold when the queue turns out to be full.
   */
  async holdWithinLimits(
    manager: Transaction,
    caller: AuthContext,
    account: LockedAccount,
    request: LimitsRequest,
  ): Promise<void> {
    await this.checkLimits(manager, caller, account, request, request.jobId);
  }

  /**
   * The same checks in the same order, without taking a hold (the estimate): the error a submit of
   * this request would get now, or null when it would be accepted.
   */
  async refusal(
    manager: Transaction,
    caller: AuthContext,
    account: LockedAccount,
    request: LimitsLook,
  ): Promise<ApiError | null> {
    try {
      await this.checkLimits(manager, caller, account, request, null);
      return null;
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
  }

  private async checkLimits(
    manager: Transaction,
    caller: AuthContext,
    account: LockedAccount,
    request: LimitsLook,
    /** The job to hold credits for; null looks without holding. */
    holdFor: string | null,
  ): Promise<void> {
    const period = billingPeriod();
    // Everything the checks count, in one round trip; the checks then run in the contract's order.
    const usage = await this.jobs.limitUsage(manager, {
      accountId: caller.accountId,
      region: request.region,
      since: period.start,
      quota: caller.plan.processingMinutesPerMonth !== null,
      spendCap: account.spend_limit_usd !== null,
      queueDepthLimit: this.config.maxQueueDepth,
    });
    this.checkQuota(caller, request, period, usage.secondsUsed);
    this.checkConcurrency(caller, account.open_jobs);
    this.checkSpendCap(caller, account, request, period, usage.capturedCredits);
    await this.hold(manager, caller, account, request, holdFor);
    this.checkQueueDepth(usage.queued);
  }

  private checkQuota(caller: AuthContext, request: LimitsLook, period: BillingPeriod, secondsUsed: number): void {
    const quota = caller.plan.processingMinutesPerMonth;
    if (quota === null) return;
    const usedMinutes = secondsUsed / 60;
    if (usedMinutes + request.estimatedSeconds / 60 > quota) {
      throw new ApiError('quota_exceeded', {
        details: {
          processing_minutes_limit: quota,
          processing_minutes_used: Math.ceil(usedMinutes),
          required_minutes: Math.ceil(request.estimatedSeconds / 60),
          reset_at: period.resetsAt.toISOString(),
        },
      });
    }
  }

  private checkConcurrency(caller: AuthContext, running: number): void {
    if (running >= caller.plan.concurrentJobs) {
      throw new ApiError('concurrency_limit_exceeded', {
        details: { concurrency_limit: caller.plan.concurrentJobs, running_jobs: running },
        retryAfterSeconds: 5,
      });
    }
  }

  /**
   * A hard ceiling: what was charged this period, what open jobs hold now and this job's estimate
   * must together stay within the cap. Compared in integer micro-dollars, never rounded to cents
   * (a $0.01 cap refuses a $0.012 job).
   */
  private checkSpendCap(
    caller: AuthContext,
    account: LockedAccount,
    request: LimitsLook,
    period: BillingPeriod,
    capturedCredits: number,
  ): void {
    if (account.spend_limit_usd === null) return;
    const rate = caller.plan.usdPerCredit;
    const limit = toMicroUsd(account.spend_limit_usd);
    const spent = creditsMicroUsd(capturedCredits, rate);
    const held = creditsMicroUsd(Number(account.reserved_credits), rate);
    const required = creditsMicroUsd(request.estimatedCredits, rate);
    if (spent + held + required > limit) {
      throw new ApiError('spend_limit_exceeded', {
        details: {
          spend_limit_usd: fromMicroUsd(limit),
          spent_usd: fromMicroUsd(spent),
          held_usd: fromMicroUsd(held),
          required_usd: fromMicroUsd(required),
          reset_at: period.resetsAt.toISOString(),
        },
      });
    }
  }

  /** The balance check is the hold: it is taken only when the available credits cover it (without a job, only compared). */
  private async hold(
    manager: Transaction,
    caller: AuthContext,
    account: LockedAccount,
    request: LimitsLook,
    holdFor: string | null,
  ): Promise<void> {
    const covered =
      holdFor === null
        ? availableCredits(account) >= request.estimatedCredits
        : await authoriseHold(manager, caller.accountId, holdFor, request.estimatedCredits);
    if (!covered) {
      const topup = this.config.billingTopupUrl;
      throw new ApiError('insufficient_credits', {
        details: {
          required_credits: request.estimatedCredits,
          available_credits: availableCredits(account),
          ...(topup ? { topup_url: topup } : {}),
        },
        // Where to buy credits, when the operator has a page for it (BILLING_TOPUP_URL).
        ...(topup && {
          message: `Your available credits do not cover the estimated cost of this job. Buy credits at ${topup}, or submit a shorter job.`,
        }),
      });
    }
  }

  private checkQueueDepth(queued: number): void {
    if (queued >= this.config.maxQueueDepth) {
      throw new ApiError('queue_full', { retryAfterSeconds: 10 });
    }
  }
}
