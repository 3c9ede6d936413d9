// POST /v1/{api}/jobs/estimate: the submit's own steps up to step 7 (prepare-job.ts; they throw as the
// submit would), then step 8 looked at without a hold: the price, the processing time, and whether the
// submit would be accepted now — if not, the error object it would get. No job, no hold, no ledger row.
import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../../../auth/auth-context';
import { HoldsRepository } from '../../../billing/holds.repository';
import { APP_CONFIG, type AppConfig } from '../../../common/config/config';
import { toErrorObject } from '../../../common/errors';
import { QUALITY_PRESETS } from '../../../media/quality-presets';
import type { OutputSpec } from '../../../media/output-spec';
import { toJobEstimate, type EstimateRung, type JobEstimate } from '../../job-estimate';
import { JobsRepository } from '../../jobs.repository';
import { SubmitLimits } from '../../limits';
import { workerVerdict } from '../../media-rules';
import { outputPicture, RESOLUTIONS, type JobOutput, type OutputPicture } from '../../output-options';
import { packageRungs, sumCredits } from '../../pricing';
import { itemProcessingSeconds, packageProcessingSeconds } from '../../processing-time';
import { RegionHealth } from '../../region-health';
import { PrepareJob } from '../prepare-job';
import { inputParam, type PricedItem, type SubmitRequest } from '../submit-request';

@Injectable()
export class EstimateJob {
  constructor(
    private readonly prepare: PrepareJob,
    private readonly jobs: JobsRepository,
    private readonly holds: HoldsRepository,
    private readonly limits: SubmitLimits,
    private readonly regions: RegionHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(caller: AuthContext, request: SubmitRequest): Promise<JobEstimate> {
    const { job, spec, items, region } = await this.prepare.execute(caller, request, 'estimate');
    const estimatedCredits = items.reduce((sum, item) => sum + item.estimatedCredits, 0);
    const estimatedSeconds = items.reduce((sum, item) => sum + item.durationSeconds, 0);
    const limitRefusal = await this.jobs.transaction(async (manager) => {
      const account = await this.holds.readAccount(manager, caller.accountId);
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
        items: items.map((item) => {
          const made = pictures(job, spec, item);
          return {
            ...item,
            processingSeconds: made.rungs
              ? packageProcessingSeconds(item.durationSeconds, made.rungs, preset)
              : itemProcessingSeconds(job.api, item, targetLines, preset),
            ...made,
          };
        }),
      },
      refusal &&
        toErrorObject(
          refusal.code,
          { requestId: request.requestId, docsUrl: this.config.docsUrl },
          { param: refusal.param, details: refusal.details, message: refusal.message },
        ),
    );
  }
}

/** What an item produces: a file's picture; a package's rungs, each priced, and its top rung as the picture. */
function pictures(
  job: JobOutput,
  spec: OutputSpec,
  item: PricedItem,
): { picture: OutputPicture; rungs?: EstimateRung[] } {
  if (spec.api !== 'sdr2hdr' || !spec.ladder) return { picture: outputPicture(job, item) };
  const rungs = packageRungs(spec, item).map((rung) => ({
    codec: rung.codec,
    video_range: rung.range,
    width: rung.width,
    height: rung.height,
    bitrate_kbps: rung.bitrateKbps,
    estimated_credits: sumCredits(item.durationSeconds, [rung]),
  }));
  return { picture: { output_width: rungs[0].width, output_height: rungs[0].height }, rungs };
}
