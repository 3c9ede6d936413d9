import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { readAccount } from '../billing/holds';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError, toErrorObject } from '../common/errors';
import type { IdempotencyClaim } from '../common/idempotency/idempotent-response';
import { newId } from '../common/ids';
import { toList, type ListResponse } from '../common/pagination';
import type { JobInputDto } from './dto/submit-job.dto';
import { JobLifecycle } from './job-lifecycle';
import { toJobEstimate, type JobEstimate } from './job-estimate';
import { workerVerdict } from './media-rules';
import { JobQueue } from './job-queue';
import { toJobView, viewLinks, type JobView } from './job-view';
import { JobAdmission } from './job-admission';
import { accountStateRefusal } from './account-state';
import type { ItemSource, JobApi } from './job.types';
import { JobsRepository, type NewJobItem } from './jobs.repository';
import { SubmitLimits } from './limits';
import {
  outputPicture,
  outputPixels,
  RESOLUTIONS,
  resolutionPixels,
  outputSpec,
  resolveOutput,
  type JobOutput,
  type RequestedOutput,
} from './output-options';
import { itemCredits } from './pricing';
import { requestProbeBudget } from './probe-slots';
import { itemProcessingSeconds } from './processing-time';
import { QUALITY_PRESETS } from '../media/quality-presets';
import { RegionHealth } from './region-health';
import { SourcesService, type CheckedSource, type DeclaredSource } from './sources.service';

/** The smallest output a client can ask for (RESOLUTIONS). */
const SMALLEST_RESOLUTION = '720p';

export type SubmitRequest = RequestedOutput & {
  inputs: JobInputDto[];
  metadata: Record<string, unknown>;
  region?: string;
  requestId: string;
  /** The request's claimed Idempotency-Key: its 202 is stored in the job's own transaction. */
  idempotency?: IdempotencyClaim;
  /** Aborts when the client goes away: the source checks still running for it stop (made when first asked for). */
  signal?: () => AbortSignal;
};

@Injectable()
export class JobsService {
  private readonly logger = new Logger(JobsService.name);

  constructor(
    private readonly jobs: JobsRepository,
    private readonly sources: SourcesService,
    private readonly limits: SubmitLimits,
    private readonly admission: JobAdmission,
    private readonly lifecycle: JobLifecycle,
    private readonly queue: JobQueue,
    private readonly regions: RegionHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Submit, in the order of docs/api-decisions.md §2. Before this runs, the access guard did steps 1–3 (auth, rate,
   * maintenance), the validation pipe step 4 and the idempotency interceptor step 5. Here (`prepare`,
   * shared with the estimate):
   * - step 4's rules class-validator cannot express (metadata, one source per input);
   * - step 3's region health: here, not in the guard, because the region is named in the body, and
   *   after step 5 so that a retried submit whose job exists gets its stored 202 even while the
   *   region is down;
   * - step 6, account state and plan; step 7, each source (probed); step 6's plan check of the output's
   *   pixels, which only the probe can tell;
   * then step 8, limits and money (src/jobs/limits.ts) with the job's insert, in one transaction.
   */
  async submit(caller: AuthContext, request: SubmitRequest): Promise<JobView> {
    const { job, items, region, metadata } = await this.prepare(caller, request, 'submit');
    const view = await this.create(caller, {
      job,
      items: items.map(storedItem),
      region,
      metadata,
      requestId: request.requestId,
      idempotency: request.idempotency,
    });
    // After commit: if Redis is down now, a worker's reconciler enqueues the job later.
    await this.queue.enqueue(view.job_id, region).catch((error: unknown) => {
      this.logger.warn({ job_id: view.job_id, err: error }, 'enqueue failed; the reconciler will enqueue the job');
    });
    return view;
  }

  /**
   * The submit's own steps up to step 7 (they throw as the submit would), then step 8 looked at without
   * a hold: the price, the processing time, and whether the submit would be accepted now — if not,
   * the error object it would get. No job, no hold, no ledger row.
   */
  async estimate(caller: AuthContext, request: SubmitRequest): Promise<JobEstimate> {
    const { job, items, region } = await this.prepare(caller, request, 'estimate');
    const estimatedCredits = items.reduce((sum, item) => sum + item.estimatedCredits, 0);
    const estimatedSeconds = items.reduce((sum, item) => sum + item.durationSeconds, 0);
    const limitRefusal = await this.jobs.transaction(async (manager) => {
      const account = await readAccount(manager, caller.accountId);
      return this.limits.refusal(manager, caller, account, { region, estimatedCredits, estimatedSeconds });
    });
    // The submit's refusal first (what it would answer now); else what the job would end with (media-rules.ts).
    const refusal =
      limitRefusal ??
      items
        .map((item, index) => workerVerdict(job.api, item, inputParam(item.source, index), this.config))
        .find((verdict) => verdict !== null) ??
      null;
    const video = job.api === 'sdr2hdr' ? job.output : null;
    const targetLines = video && video.resolution !== 'source' ? RESOLUTIONS[video.resolution] : undefined;
    const preset = video ? QUALITY_PRESETS[video.quality].preset : undefined;
    return toJobEstimate(
      {
        api: job.api,
        region,
        usdPerCredit: caller.plan.usdPerCredit,
        workers: await this.regions.liveWorkers(region),
        segmentSeconds: this.config.segmentSeconds,
        items: items.map((item) => ({
          ...item,
          processingSeconds: itemProcessingSeconds(job.api, item, targetLines, preset),
          picture: outputPicture(job, item),
        })),
      },
      refusal &&
        toErrorObject(
          refusal.code,
          { requestId: request.requestId, docsUrl: this.config.docsUrl },
          { param: refusal.param, details: refusal.details, message: refusal.message },
        ),
    );
  }

  async get(accountId: string, jobId: string, api?: JobApi): Promise<JobView> {
    const found = await this.jobs.findForAccount(accountId, jobId, this.config.jobRetentionDays);
    if (!found || (api && found.job.api !== api)) throw new ApiError('job_not_found', { param: 'job_id' });
    return toJobView(found.job, found.items, viewLinks(this.config));
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
    const links = viewLinks(this.config);
    return toList(
      found.map(({ job, items }) => toJobView(job, items, links)),
      limit,
      (view) => view.job_id,
    );
  }

  /** Cancels through the job lifecycle, then tells the worker running it to stop its media process. */
  async cancel(accountId: string, api: JobApi, jobId: string): Promise<JobView> {
    await this.get(accountId, jobId, api);
    await this.lifecycle.cancel(jobId);
    await this.queue.signalCancel(jobId).catch((error: unknown) => {
      // The job has ended and its hold is released; the worker finds it ended at its next progress mark.
      this.logger.warn({ job_id: jobId, err: error }, 'cancel signal not sent; the worker stops at its next check');
    });
    return this.get(accountId, jobId, api);
  }

  /**
   * Steps 3 (region), 4 (the body's own rules), 6 and 7, shared by submit and estimate: the checked
   * sources priced for the job's output.
   */
  private async prepare(
    caller: AuthContext,
    request: SubmitRequest,
    purpose: 'submit' | 'estimate',
  ): Promise<{ job: JobOutput; items: PricedItem[]; region: string; metadata: Record<string, string> }> {
    const metadata = validateMetadata(request.metadata);
    const inputs = request.inputs.map((input, index) => validateInput(input, index, purpose));
    const region = await this.checkRegion(request.region);
    const job = resolveOutput(request);
    this.checkPlan(caller, job);
    checkAccountState(caller.subscriptionStatus);
    const items = await this.checkSources(caller, job, inputs, request.signal);
    this.checkOutputPictures(caller, job, items);
    return { job, items, region, metadata };
  }

  private async checkRegion(requested: string | undefined): Promise<string> {
    const region = requested ?? this.config.region;
    if (!(await this.regions.isHealthy(region))) {
      throw new ApiError('region_unavailable', {
        param: requested ? 'region' : null,
        details: { region },
        retryAfterSeconds: 30,
      });
    }
    return region;
  }

  private checkPlan(caller: AuthContext, job: JobOutput): void {
    if (!caller.plan.apis.includes(job.api)) {
      throw new ApiError('plan_not_supported', {
        message: `Your plan (${caller.plan.id}) does not include the ${job.api} API. Upgrade your plan to use it.`,
      });
    }
    if (job.api !== 'sdr2hdr' || job.output.resolution === 'source') return;
    if (RESOLUTIONS[job.output.resolution] > caller.plan.maxOutputHeight) {
      throw new ApiError('plan_not_supported', {
        param: 'output.resolution',
        message: `Your plan's largest output is ${caller.plan.maxOutputHeight}p. Request a smaller output.resolution or upgrade.`,
      });
    }
  }

  /** Step 7: each source, in order; priced for the job's output. */
  private async checkSources(
    caller: AuthContext,
    job: JobOutput,
    inputs: JobInputDto[],
    signal?: () => AbortSignal,
  ): Promise<PricedItem[]> {
    const items: PricedItem[] = [];
    // All inputs together get PROBE_REQUEST_SECONDS to be inspected (probe-slots.ts).
    const budget = requestProbeBudget(signal, this.config.probeRequestSeconds);
    try {
      for (const [index, input] of inputs.entries()) {
        const source: CheckedSource<ItemSource | DeclaredSource> = input.media
          ? this.sources.declared(job.api, input.media, index)
          : await this.sources.check(caller.accountId, job.api, input, index, budget.signal);
        const pixels = job.api === 'sdr2hdr' ? outputPixels(source, job.output.resolution) : 0;
        items.push({ ...source, estimatedCredits: itemCredits(job.api, source.durationSeconds, pixels) });
      }
    } finally {
      budget.end();
    }
    return items;
  }

  /**
   * Step 6 again, for what only the probe knows: an output with more pixels than the plan's largest
   * (resolutionPixels of its lines: a 1080p plan takes up to 1920×1080's pixels, in any shape). The
   * param is output.resolution when a smaller resolution makes it fit, else the input (a picture
   * that no resolution shrinks enough: 11520×720 stays 11520×720 at 720p).
   */
  private checkOutputPictures(caller: AuthContext, job: JobOutput, items: PricedItem[]): void {
    if (job.api !== 'sdr2hdr') return;
    const maxPixels = resolutionPixels(caller.plan.maxOutputHeight);
    for (const [index, item] of items.entries()) {
      const pixels = outputPixels(item, job.output.resolution);
      if (pixels <= maxPixels) continue;
      const output = outputPicture(job, item);
      const shrinks = outputPixels(item, SMALLEST_RESOLUTION) <= maxPixels;
      throw new ApiError('plan_not_supported', {
        param: shrinks ? 'output.resolution' : `inputs[${index}]`,
        message:
          `The output would be ${output.output_width}×${output.output_height} (${pixels} pixels); your plan's largest output ` +
          `is ${caller.plan.maxOutputHeight}p, ${maxPixels} pixels in any shape. ` +
          (shrinks ? 'Request a smaller output.resolution or upgrade.' : 'Send a smaller picture or upgrade.'),
        details: {
          output_width: output.output_width,
          output_height: output.output_height,
          output_pixels: pixels,
          max_output_pixels: maxPixels,
        },
      });
    }
  }

  /** Step 8 and the job itself, in one transaction (job-admission.ts). */
  private create(
    caller: AuthContext,
    submit: {
      job: JobOutput;
      items: NewJobItem[];
      region: string;
      metadata: Record<string, string>;
      requestId: string;
      idempotency?: IdempotencyClaim;
    },
  ): Promise<JobView> {
    return this.admission.admit({
      caller,
      job: {
        id: newId('job'),
        accountId: caller.accountId,
        api: submit.job.api,
        region: submit.region,
        outputOptions: submit.job.output,
        outputSpec: outputSpec(submit.job),
        metadata: submit.metadata,
        estimatedCredits: submit.items.reduce((sum, item) => sum + item.estimatedCredits, 0),
        estimatedSeconds: submit.items.reduce((sum, item) => sum + item.durationSeconds, 0),
        requestId: submit.requestId,
        items: submit.items,
      },
      idempotency: submit.idempotency,
    });
  }
}

/** Step 6: the subscription must be paid up (checked again under the account lock at step 8). */
function checkAccountState(subscriptionStatus: string): void {
  const refusal = accountStateRefusal(subscriptionStatus);
  if (refusal) throw refusal;
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

/** A checked input with its price: a source, or (estimate only) a described file. */
type PricedItem = Omit<NewJobItem, 'source'> & { source: ItemSource | DeclaredSource };

/** The request field an item came from, as its errors name it. */
function inputParam(source: ItemSource | DeclaredSource, index: number): string {
  const field = source.type === 'declared' ? 'media' : source.type === 'upload' ? 'upload_id' : 'source_url';
  return `inputs[${index}].${field}`;
}

/** A submit's items are sources: validateInput refused `media` for a submit. */
function storedItem(item: PricedItem): NewJobItem {
  const { source } = item;
  if (source.type === 'declared') throw new Error('a described input reached a submit');
  return { ...item, source };
}

function validateInput(input: JobInputDto, index: number, purpose: 'submit' | 'estimate'): JobInputDto {
  if (input.media !== undefined) {
    if (purpose === 'submit') {
      throw new ApiError('invalid_parameter', {
        param: `inputs[${index}].media`,
        message: `inputs[${index}].media describes a file for an estimate only: upload it (POST /v1/uploads) and submit its upload_id.`,
      });
    }
    if (input.source_url !== undefined || input.upload_id !== undefined) {
      throw new ApiError('invalid_parameter', {
        param: `inputs[${index}].media`,
        message: `inputs[${index}] takes one of source_url, upload_id or media.`,
      });
    }
    return input;
  }
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
