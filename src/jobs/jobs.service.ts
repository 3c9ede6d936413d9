import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { billingPeriod } from '../billing/billing-period';
import { BillingService, usd } from '../billing/billing.service';
import { authoriseHold, lockAccount, settleHold } from '../billing/holds';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError, toErrorObject } from '../common/errors';
import { newId } from '../common/ids';
import { toList, type ListResponse } from '../common/pagination';
import type { JobInputDto } from './dto/submit-job.dto';
import { JobQueue } from './job-queue';
import { toJobView, type JobView } from './job-view';
import { isTerminal } from './job.types';
import { JobsRepository } from './jobs.repository';
import { OutboxWriter } from '../webhooks/outbox.writer';
import { itemCredits, outputHeight, RESOLUTIONS, type JobApi, type Resolution } from './pricing';
import { RegionHealth } from './region-health';
import { SourcesService, type CheckedSource } from './sources.service';

export interface SubmitRequest {
  api: JobApi;
  inputs: JobInputDto[];
  output: Record<string, unknown>;
  metadata: Record<string, unknown>;
  region?: string;
  requestId: string;
}

@Injectable()
export class JobsService {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly sources: SourcesService,
    private readonly queue: JobQueue,
    private readonly regions: RegionHealth,
    private readonly outbox: OutboxWriter,
    private readonly billing: BillingService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    billing.registerUsageSource(async (accountId, since) =>
      Math.ceil((await this.jobs.secondsUsedSince(accountId, since)) / 60),
    );
  }

  /**
   * Submit, in the order of API.md §2 (auth, rate and maintenance already passed in the guard,
   * request shape in the validation pipe): region health, account state and plan, sources, then
   * limits and money inside one transaction that also inserts the job and its credit hold.
   */
  async submit(caller: AuthContext, request: SubmitRequest): Promise<JobView> {
    const metadata = validateMetadata(request.metadata);
    const inputs = request.inputs.map(validateInput);
    const region = request.region ?? this.config.region;
    if (!(await this.regions.isHealthy(region))) {
      throw new ApiError('region_unavailable', {
        param: request.region ? 'region' : null,
        details: { region },
        retryAfterSeconds: 30,
      });
    }
    this.checkPlan(caller, request);
    this.checkAccountState(caller.subscriptionStatus);

    const checked: CheckedSource[] = [];
    for (const [index, input] of inputs.entries()) {
      checked.push(await this.sources.check(caller.accountId, request.api, input, index));
    }
    const resolution = (request.output.resolution as Resolution | undefined) ?? 'source';
    const items = checked.map((source) => ({
      source: source.source,
      durationSeconds: source.durationSeconds,
      width: source.width,
      height: source.height,
      estimatedCredits: itemCredits(request.api, source.durationSeconds, outputHeight(source.height ?? 0, resolution)),
    }));
    for (const [index, item] of items.entries()) {
      if (request.api === 'sdr2hdr' && outputHeight(item.height ?? 0, resolution) > caller.plan.maxOutputHeight) {
        throw new ApiError('plan_not_supported', {
          param: resolution === 'source' ? `inputs[${index}]` : 'output.resolution',
          message: `Your plan's largest output is ${caller.plan.maxOutputHeight}p. Request a smaller output.resolution or upgrade.`,
        });
      }
    }
    const estimatedCredits = items.reduce((sum, item) => sum + item.estimatedCredits, 0);
    const estimatedSeconds = items.reduce((sum, item) => sum + item.durationSeconds, 0);
    const jobId = newId('job');

    // The job view is read inside the transaction: once it commits, nothing may fail any more (a 503
    // then would tell the client to retry a job that exists and holds credits).
    const created = await this.jobs.transaction(async (manager) => {
      // Concurrent submits of one account queue on this lock, so the checks below and the hold agree.
      const account = await lockAccount(manager, caller.accountId);
      this.checkAccountState(account.subscription_status);
      const period = billingPeriod();
      const quota = caller.plan.processingMinutesPerMonth;
      if (quota !== null) {
        const usedMinutes = (await this.jobs.secondsUsedSince(caller.accountId, period.start, manager)) / 60;
        if (usedMinutes + estimatedSeconds / 60 > quota) {
          throw new ApiError('quota_exceeded', {
            details: {
              processing_minutes_limit: quota,
              processing_minutes_used: Math.ceil(usedMinutes),
              required_minutes: Math.ceil(estimatedSeconds / 60),
              reset_at: period.resetsAt.toISOString(),
            },
          });
        }
      }
      const running = await this.jobs.countActive(manager, caller.accountId);
      if (running >= caller.plan.concurrentJobs) {
        throw new ApiError('concurrency_limit_exceeded', {
          details: { concurrency_limit: caller.plan.concurrentJobs, running_jobs: running },
          retryAfterSeconds: 5,
        });
      }
      if (account.spend_limit_usd !== null) {
        const limit = Number(account.spend_limit_usd);
        const spent = usd(
          await this.billing.capturedSince(caller.accountId, period.start, manager),
          caller.plan.usdPerCredit,
        );
        if (spent + usd(estimatedCredits, caller.plan.usdPerCredit) > limit) {
          throw new ApiError('spend_limit_exceeded', {
            details: { spend_limit_usd: limit, spent_usd: spent, reset_at: period.resetsAt.toISOString() },
          });
        }
      }
      const available = Number(account.balance_credits) - Number(account.reserved_credits);
      if (!(await authoriseHold(manager, caller.accountId, jobId, estimatedCredits))) {
        throw new ApiError('insufficient_credits', {
          details: { required_credits: estimatedCredits, available_credits: available },
        });
      }
      if ((await this.jobs.countQueued(manager, region)) >= this.config.maxQueueDepth) {
        throw new ApiError('queue_full', { retryAfterSeconds: 10 });
      }
      await this.jobs.insert(manager, {
        id: jobId,
        accountId: caller.accountId,
        api: request.api,
        region,
        outputOptions: request.output,
        metadata,
        estimatedCredits,
        estimatedSeconds,
        requestId: request.requestId,
        items,
      });
      return this.jobs.findForAccount(caller.accountId, jobId, this.config.jobRetentionDays, manager);
    });
    // After commit: if Redis is down now, the worker's reconciler enqueues the job later.
    await this.queue.enqueue(jobId, region).catch(() => undefined);
    return toJobView(created!.job, created!.items, this.links());
  }

  async get(accountId: string, jobId: string, api?: JobApi): Promise<JobView> {
    const found = await this.jobs.findForAccount(accountId, jobId, this.config.jobRetentionDays);
    if (!found || (api && found.job.api !== api)) throw new ApiError('job_not_found', { param: 'job_id' });
    return toJobView(found.job, found.items, this.links());
  }

  async list(
    accountId: string,
    api: JobApi,
    query: { limit?: number; starting_after?: string; status?: string },
  ): Promise<ListResponse<JobView>> {
    const limit = query.limit ?? 20;
    const found = await this.jobs.list(accountId, api, {
      limit: limit + 1,
      startingAfter: query.starting_after,
      status: query.status,
      retentionDays: this.config.jobRetentionDays,
    });
    const links = this.links();
    return toList(
      found.map(({ job, items }) => toJobView(job, items, links)),
      limit,
      (view) => view.job_id,
    );
  }

  /**
   * Cancels a queued job, or a processing one within the cancel window: the job ends here, in one
   * transaction (status, release of the hold, job.cancelled event); the worker is told to kill its
   * media process and finds the job already terminal.
   */
  async cancel(accountId: string, api: JobApi, jobId: string): Promise<JobView> {
    await this.get(accountId, jobId, api);
    const cancelled = await this.jobs.transaction(async (manager) => {
      const job = await this.jobs.find(manager, jobId, true);
      if (!job) throw new ApiError('job_not_found', { param: 'job_id' });
      const windowEnds = job.started_at ? job.started_at.getTime() + this.config.cancelWindowSeconds * 1000 : Infinity;
      if (isTerminal(job.status) || (job.status === 'processing' && Date.now() > windowEnds)) {
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
      await settleHold(manager, jobId, 0, { status: 'cancelled', extraSet: 'error = $5', extraParams: [error] });
      await manager.query(
        `UPDATE job_items SET status = 'cancelled' WHERE job_id = $1 AND status IN ('queued', 'processing')`,
        [jobId],
      );
      await this.outbox.write(manager, { accountId, jobId, event: 'job.cancelled', error });
      return job;
    });
    await this.queue.signalCancel(cancelled.id).catch(() => undefined);
    return this.get(accountId, jobId, api);
  }

  private checkPlan(caller: AuthContext, request: SubmitRequest): void {
    if (!caller.plan.apis.includes(request.api)) {
      throw new ApiError('plan_not_supported', {
        message: `Your plan (${caller.plan.id}) does not include the ${request.api} API. Upgrade your plan to use it.`,
      });
    }
    const resolution = request.output.resolution as Resolution | undefined;
    if (resolution && resolution !== 'source' && RESOLUTIONS[resolution] > caller.plan.maxOutputHeight) {
      throw new ApiError('plan_not_supported', {
        param: 'output.resolution',
        message: `Your plan's largest output is ${caller.plan.maxOutputHeight}p. Request a smaller output.resolution or upgrade.`,
      });
    }
  }

  /** What a job view needs to sign its output links. */
  private links(): { baseUrl: string; secret: string } {
    return { baseUrl: this.config.publicBaseUrl, secret: this.config.assetUrlSecret };
  }

  private checkAccountState(subscriptionStatus: string): void {
    if (subscriptionStatus === 'inactive') throw new ApiError('subscription_inactive');
    if (subscriptionStatus === 'payment_failed') throw new ApiError('payment_failed');
  }
}

function validateMetadata(metadata: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(metadata);
  if (entries.length > 50)
    throw new ApiError('invalid_parameter', { param: 'metadata', message: 'metadata takes at most 50 keys.' });
  for (const [key, value] of entries) {
    if (key.length > 40 || typeof value !== 'string' || value.length > 500) {
      throw new ApiError('invalid_parameter', {
        param: `metadata.${key}`,
        message: 'metadata values must be strings of at most 500 characters, keys at most 40 characters.',
      });
    }
  }
  return metadata as Record<string, string>;
}

function validateInput(input: JobInputDto, index: number): JobInputDto {
  if (input.source_url === undefined && input.upload_id === undefined) {
    throw new ApiError('missing_parameter', {
      param: `inputs[${index}].source_url`,
      message: `inputs[${index}] needs a source_url or an upload_id.`,
    });
  }
  if (input.source_url !== undefined && input.upload_id !== undefined) {
    throw new ApiError('invalid_parameter', {
      param: `inputs[${index}].upload_id`,
      message: `inputs[${index}] takes a source_url or an upload_id, not both.`,
    });
  }
  return input;
}
