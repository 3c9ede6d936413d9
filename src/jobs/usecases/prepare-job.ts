// The steps a submit and its estimate share (docs/api-decisions.md §2): before this runs, the access
// guard did steps 1–3 (auth, rate, maintenance), the validation pipe step 4 and the idempotency
// interceptor step 5. Here:
// - step 4's rules class-validator cannot express (metadata, one source per input: submit-request.ts);
// - step 3's region health: here, not in the guard, because the region is named in the body, and after
//   step 5 so that a retried submit whose job exists gets its stored 202 even while the region is down;
// - step 6, account state and plan; step 7, each source (probed); step 6's plan check of the output's
//   pixels, which only the probe can tell.
// Each throws as the submit answers; the submit then does step 8 (submit-job), the estimate looks at it.
import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../../auth/auth-context';
import { APP_CONFIG, type AppConfig } from '../../common/config/config';
import { ApiError } from '../../common/errors';
import { accountStateRefusal } from '../account-state';
import type { JobInputDto } from '../dto/submit-job.dto';
import type { ItemSource } from '../job.types';
import type { HdrOutputSpec, OutputSpec } from '../../media/output-spec';
import {
  outputPicture,
  outputPixels,
  outputSpec,
  RESOLUTIONS,
  resolutionPixels,
  resolveOutput,
  type JobOutput,
} from '../output-options';
import { packageRungs, specCredits } from '../pricing';
import { requestProbeBudget } from '../probe-slots';
import { RegionHealth } from '../region-health';
import { SourcesService, type CheckedSource, type DeclaredSource } from '../sources.service';
import { validateInput, validateMetadata, type PricedItem, type SubmitRequest } from './submit-request';

/** The smallest output a client can ask for (RESOLUTIONS). */
const SMALLEST_RESOLUTION = '720p';

export interface PreparedJob {
  job: JobOutput;
  /** What the worker will make of each item, resolved once (output-options.ts outputSpec). */
  spec: OutputSpec;
  items: PricedItem[];
  region: string;
  metadata: Record<string, string>;
}

@Injectable()
export class PrepareJob {
  constructor(
    private readonly sources: SourcesService,
    private readonly regions: RegionHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Steps 3 (region), 4 (the body's own rules), 6 and 7: the checked sources priced for the job's output. */
  async execute(caller: AuthContext, request: SubmitRequest, purpose: 'submit' | 'estimate'): Promise<PreparedJob> {
    const metadata = validateMetadata(request.metadata);
    const inputs = request.inputs.map((input, index) => validateInput(input, index, purpose));
    const region = await this.checkRegion(request.region);
    const job = resolveOutput(request);
    checkPlan(caller, job);
    checkAccountState(caller.subscriptionStatus);
    const spec = outputSpec(job, caller.plan);
    const items = await this.checkSources(caller, job, spec, inputs, request.signal);
    checkOutputPictures(caller, job, spec, items);
    return { job, spec, items, region, metadata };
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

  /** Step 7: each source, in order; priced for the job's output. */
  private async checkSources(
    caller: AuthContext,
    job: JobOutput,
    spec: OutputSpec,
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
        items.push({ ...source, estimatedCredits: specCredits(spec, source.durationSeconds, source) });
      }
    } finally {
      budget.end();
    }
    return items;
  }
}

function checkPlan(caller: AuthContext, job: JobOutput): void {
  if (!caller.plan.apis.includes(job.api)) {
    throw new ApiError('plan_not_supported', {
      message: `Your plan (${caller.plan.id}) does not include the ${job.api} API. Upgrade your plan to use it.`,
    });
  }
  if (job.api !== 'sdr2hdr') return;
  // A package's largest output is its top rung: an asked line above the plan's is refused here, before the
  // probe (the default ladder stops at the plan's largest output: outputSpec).
  const over = (job.output.ladder ?? []).findIndex(({ height }) => height > caller.plan.maxOutputHeight);
  if (over >= 0) {
    throw new ApiError('plan_not_supported', {
      param: `output.ladder[${over}].height`,
      message: `Your plan's largest output is ${caller.plan.maxOutputHeight}p. Ask for rungs of at most ${caller.plan.maxOutputHeight} lines or upgrade.`,
    });
  }
  if (job.output.resolution === 'source') return;
  if (RESOLUTIONS[job.output.resolution] > caller.plan.maxOutputHeight) {
    throw new ApiError('plan_not_supported', {
      param: 'output.resolution',
      message: `Your plan's largest output is ${caller.plan.maxOutputHeight}p. Request a smaller output.resolution or upgrade.`,
    });
  }
}

/** Step 6: the subscription must be paid up (checked again under the account lock at step 8). */
function checkAccountState(subscriptionStatus: string): void {
  const refusal = accountStateRefusal(subscriptionStatus);
  if (refusal) throw refusal;
}

/**
 * Step 6 again, for what only the probe knows: an output with more pixels than the plan's largest
 * (resolutionPixels of its lines: a 1080p plan takes up to 1920×1080's pixels, in any shape). The
 * param is output.resolution when a smaller resolution makes it fit, else the input (a picture
 * that no resolution shrinks enough: 11520×720 stays 11520×720 at 720p).
 */
function checkOutputPictures(caller: AuthContext, job: JobOutput, spec: OutputSpec, items: PricedItem[]): void {
  if (job.api !== 'sdr2hdr' || spec.api !== 'sdr2hdr') return;
  const maxPixels = resolutionPixels(caller.plan.maxOutputHeight);
  if (spec.ladder) return checkTopRungs(caller, job.output.ladder ?? null, spec, items, maxPixels);
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

/**
 * checkOutputPictures for a package: every rung's picture within the plan's largest (its top rung decides).
 * The param is output.ladder when only the asked HDR rungs are over, else the input (the SDR rungs and the
 * default ladder follow the source: a picture too wide for the plan at any size).
 */
function checkTopRungs(
  caller: AuthContext,
  asked: { height: number }[] | null,
  spec: HdrOutputSpec,
  items: PricedItem[],
  maxPixels: number,
): void {
  for (const [index, item] of items.entries()) {
    const over = packageRungs(spec, item).filter((rung) => rung.width * rung.height > maxPixels);
    if (over.length === 0) continue;
    const top = over[0];
    const onlyAsked = asked !== null && over.every((rung) => rung.range !== 'SDR');
    throw new ApiError('plan_not_supported', {
      param: onlyAsked ? 'output.ladder' : `inputs[${index}]`,
      message:
        `The package's top rung would be ${top.width}×${top.height} (${top.width * top.height} pixels); your plan's largest ` +
        `output is ${caller.plan.maxOutputHeight}p, ${maxPixels} pixels in any shape. ` +
        (onlyAsked ? 'Ask for smaller rungs in output.ladder or upgrade.' : 'Send a smaller picture or upgrade.'),
      details: {
        output_width: top.width,
        output_height: top.height,
        output_pixels: top.width * top.height,
        max_output_pixels: maxPixels,
      },
    });
  }
}
