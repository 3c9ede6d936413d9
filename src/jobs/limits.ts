// Step 8 of docs/api-decisions.md §2, "limits and money", in the order the contract fixes: quota, concurrency, spend
// cap, balance, queue depth. The submit's transaction (src/jobs/job-admission.ts) counts what the checks
// need and decides with the account row locked, so concurrent submits of one account see each other's
// holds and jobs; it takes the credit hold only for a submit within every limit.
import { Inject, Injectable } from '@nestjs/common';
import type { Transaction } from '../common/database/pg-transaction';
import type { AuthContext } from '../auth/auth-context';
import { billingPeriod, type BillingPeriod } from '../billing/billing-period';
import { creditsMicroUsd, fromMicroUsd, toMicroUsd } from '../billing/micro-usd';
import { availableCredits, type LockedAccount } from '../billing/holds.repository';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { JobsRepository, type LimitUsage } from './jobs.repository';

/** What a new job asks of the account's limits. */
export interface LimitsLook {
  region: string;
  estimatedCredits: number;
  estimatedSeconds: number;
}

@Injectable()
export class SubmitLimits {
  constructor(
    private readonly jobs: JobsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * What the checks count (quota, spend cap, queue depth) for each look, in one statement; the caller's
   * transaction holds the accounts' row locks (a submit) or reads them (an estimate).
   */
  usage(
    manager: Transaction,
    period: BillingPeriod,
    looks: { caller: AuthContext; account: LockedAccount; look: LimitsLook }[],
  ): Promise<LimitUsage[]> {
    return this.jobs.limitUsage(
      manager,
      looks.map(({ caller, account, look }) => ({
        accountId: caller.accountId,
        region: look.region,
        since: period.start,
        quota: caller.plan.processingMinutesPerMonth !== null,
        spendCap: account.spend_limit_usd !== null,
      })),
      this.config.maxQueueDepth,
    );
  }

  /**
   * The first limit the request exceeds, in the contract's order, or null when it is within all of them.
   * `account` is the account's row as its lock read it, so the balance check here is the one the hold
   * then makes (authoriseHolds, in the same transaction); `usage` is what `usage` counted for `period`.
   */
  firstExceeded(
    caller: AuthContext,
    account: LockedAccount,
    look: LimitsLook,
    period: BillingPeriod,
    usage: LimitUsage,
  ): ApiError | null {
    return (
      this.checkQuota(caller, look, period, usage.secondsUsed) ??
      this.checkConcurrency(caller, account.open_jobs) ??
      this.checkSpendCap(caller, account, look, period, usage.capturedCredits) ??
      this.checkBalance(account, look) ??
      this.checkQueueDepth(usage.queued)
    );
  }

  /** The error a submit of this request would get now, or null when it would be accepted (the estimate). */
  async refusal(
    manager: Transaction,
    caller: AuthContext,
    account: LockedAccount,
    look: LimitsLook,
  ): Promise<ApiError | null> {
    const period = billingPeriod();
    const [usage] = await this.usage(manager, period, [{ caller, account, look }]);
    return this.firstExceeded(caller, account, look, period, usage);
  }

  private checkQuota(
    caller: AuthContext,
    request: LimitsLook,
    period: BillingPeriod,
    secondsUsed: number,
  ): ApiError | null {
    const quota = caller.plan.processingMinutesPerMonth;
    if (quota === null) return null;
    const usedMinutes = secondsUsed / 60;
    if (usedMinutes + request.estimatedSeconds / 60 > quota) {
      return new ApiError('quota_exceeded', {
        details: {
          processing_minutes_limit: quota,
          processing_minutes_used: Math.ceil(usedMinutes),
          required_minutes: Math.ceil(request.estimatedSeconds / 60),
          reset_at: period.resetsAt.toISOString(),
        },
      });
    }
    return null;
  }

  private checkConcurrency(caller: AuthContext, running: number): ApiError | null {
    if (running < caller.plan.concurrentJobs) return null;
    return new ApiError('concurrency_limit_exceeded', {
      details: { concurrency_limit: caller.plan.concurrentJobs, running_jobs: running },
      retryAfterSeconds: 5,
    });
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
  ): ApiError | null {
    if (account.spend_limit_usd === null) return null;
    const rate = caller.plan.usdPerCredit;
    const limit = toMicroUsd(account.spend_limit_usd);
    const spent = creditsMicroUsd(capturedCredits, rate);
    const held = creditsMicroUsd(Number(account.reserved_credits), rate);
    const required = creditsMicroUsd(request.estimatedCredits, rate);
    if (spent + held + required > limit) {
      return new ApiError('spend_limit_exceeded', {
        details: {
          spend_limit_usd: fromMicroUsd(limit),
          spent_usd: fromMicroUsd(spent),
          held_usd: fromMicroUsd(held),
          required_usd: fromMicroUsd(required),
          reset_at: period.resetsAt.toISOString(),
        },
      });
    }
    return null;
  }

  /**
   * The balance: the available credits must cover the estimate. The hold (authoriseHolds) is taken only
   * when this passed, under the same lock, so it makes the same comparison.
   */
  private checkBalance(account: LockedAccount, request: Pick<LimitsLook, 'estimatedCredits'>): ApiError | null {
    if (availableCredits(account) >= request.estimatedCredits) return null;
    const topup = this.config.billingTopupUrl;
    return new ApiError('insufficient_credits', {
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

  private checkQueueDepth(queued: number): ApiError | null {
    if (queued < this.config.maxQueueDepth) return null;
    return new ApiError('queue_full', { retryAfterSeconds: 10 });
  }
}
