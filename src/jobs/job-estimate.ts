// The answer of POST /v1/{api}/jobs/estimate (docs/api-decisions.md §11): the submit's price and verdict, no hold, no job.
import { usd } from '../billing/billing.service';
import type { ErrorObject } from '../common/errors';
import type { ItemSource, JobApi } from './job.types';
import { sourceView, type ItemSourceView } from './job-view';
import type { NewJobItem } from './jobs.repository';
import { LADDER_SEGMENT_SECONDS } from '../media/ladder';
import type { RungSpec } from '../media/output-spec';
import type { OutputPicture } from './output-options';
import { itemWork, jobProcessingSeconds } from './processing-time';
import type { DeclaredSource } from './sources.service';

export interface JobEstimateItem {
  index: number;
  /** `{type: 'declared'}` for an input given as `media` (described, not sent). */
  source: ItemSourceView | DeclaredSource;
  duration_seconds: number;
  width: number | null;
  height: number | null;
  /** What the item will produce (never upscaled); null for audio. */
  output_width: number | null;
  output_height: number | null;
  estimated_credits: number;
  estimated_usd: number;
  /** Processing time of this item on one idle worker (src/jobs/processing-time.ts): a package's, every rung's encode. */
  estimated_seconds: number;
  /** Package `hls` only (the key is absent for a file): the item's renditions and what each costs. */
  rungs?: EstimateRung[];
}

export interface EstimateRung {
  codec: RungSpec['codec'];
  video_range: RungSpec['range'];
  width: number;
  height: number;
  bitrate_kbps: number;
  estimated_credits: number;
}

export interface JobEstimate {
  object: 'job_estimate';
  api: JobApi;
  region: string;
  estimated_credits: number;
  /** The credits at the account's plan price (`usd_per_credit`), rounded to the cent. */
  estimated_usd: number;
  usd_per_credit: number;
  /**
   * Processing time of the whole job on the region's live workers, items — and the segments of a long
   * sdr2hdr item — in parallel (one worker: one after another), not counting time in the queue.
   */
  estimated_seconds: number;
  /** Seconds of media in all inputs. */
  duration_seconds: number;
  items: JobEstimateItem[];
  /**
   * Whether a submit of the same body would be accepted now (limits and money: docs/api-decisions.md §2 step 8)
   * and its job could run: false too for an input the workers would refuse (over WORKER_MAX_PIXELS).
   */
  accepted: boolean;
  /** When not accepted: the error object the submit would get now, or the one its job would end with; else null. */
  error: ErrorObject | null;
}

export function toJobEstimate(
  estimate: {
    api: JobApi;
    region: string;
    usdPerCredit: number;
    /** Live workers of the region now (RegionHealth): how many items (or segments) run at once. */
    workers: number;
    /** SEGMENT_SECONDS: which items the workers encode in segments, and how many. */
    segmentSeconds: number;
    items: (Omit<NewJobItem, 'source'> & {
      source: ItemSource | DeclaredSource;
      processingSeconds: number;
      picture: OutputPicture;
      rungs?: EstimateRung[];
    })[];
  },
  error: ErrorObject | null,
): JobEstimate {
  const { usdPerCredit } = estimate;
  const credits = estimate.items.reduce((sum, item) => sum + item.estimatedCredits, 0);
  return {
    object: 'job_estimate',
    api: estimate.api,
    region: estimate.region,
    estimated_credits: credits,
    estimated_usd: usd(credits, usdPerCredit),
    usd_per_credit: usdPerCredit,
    estimated_seconds: jobProcessingSeconds(
      estimate.items.map((item) =>
        itemWork(
          estimate.api,
          item.durationSeconds,
          item.processingSeconds,
          estimate.segmentSeconds,
          item.rungs && LADDER_SEGMENT_SECONDS,
        ),
      ),
      estimate.workers,
    ),
    duration_seconds: estimate.items.reduce((sum, item) => sum + item.durationSeconds, 0),
    items: estimate.items.map((item, index) => ({
      index,
      source: item.source.type === 'declared' ? item.source : sourceView(item.source),
      duration_seconds: item.durationSeconds,
      width: item.width,
      height: item.height,
      ...item.picture,
      estimated_credits: item.estimatedCredits,
      estimated_usd: usd(item.estimatedCredits, usdPerCredit),
      estimated_seconds: item.processingSeconds,
      ...(item.rungs && { rungs: item.rungs }),
    })),
    accepted: error === null,
    error,
  };
}
