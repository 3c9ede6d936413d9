// What the submit and the estimate judge from an input's duration and picture size, once for both
// (docs/api-decisions.md §11, estimate): a probed source (upload or URL) and a described one
// (`inputs[i].media`, estimate only) pass through the same rules and get the same errors.
import type { AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { pixelBudgetProblem } from '../media/pixel-budget';
import type { JobApi } from './job.types';

export interface MediaShape {
  durationSeconds: number;
  width: number | null;
  height: number | null;
}

type MediaLimits = Pick<AppConfig, 'maxDurationSeconds' | 'workerMaxPixels'>;

/**
 * Step 7's rules on the numbers (the submit refuses on them): media that lasts no time is invalid_media (the
 * probe says the same of a file without a duration), one longer than MAX_DURATION_SECONDS duration_exceeded.
 */
export function checkMediaRules(media: MediaShape, param: string, limits: MediaLimits): void {
  if (!(media.durationSeconds > 0)) {
    throw new ApiError('invalid_media', {
      param,
      message: 'The media has no duration (empty or unreadable): there is nothing to process.',
    });
  }
  if (media.durationSeconds > limits.maxDurationSeconds) {
    throw new ApiError('duration_exceeded', {
      param,
      message: `The input lasts ${Math.ceil(media.durationSeconds)} s; this API accepts at most ${limits.maxDurationSeconds} s.`,
      details: { duration_seconds: media.durationSeconds, max_duration_seconds: limits.maxDurationSeconds },
    });
  }
}

/**
 * What a job with this input would certainly end with although the submit accepts it: a picture over the
 * workers' budget fails in the worker as out_of_memory, charged nothing (docs/api-decisions.md §10). The
 * estimate answers it as its verdict, so a client learns it before paying a hold.
 */
export function workerVerdict(api: JobApi, media: MediaShape, param: string, limits: MediaLimits): ApiError | null {
  if (api !== 'sdr2hdr') return null;
  const problem = pixelBudgetProblem(media.width, media.height, limits.workerMaxPixels);
  return problem && new ApiError(problem.code, { param, message: problem.message, details: problem.details });
}
