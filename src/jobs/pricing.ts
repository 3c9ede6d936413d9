// Prices as data (docs/api-decisions.md §4). Credits are estimated per item at submit and settled on the actual
// processed duration, never above the estimate.
import type { JobApi } from './job.types';

/** sdr2hdr credits per started second, by output height tier. */
const SDR2HDR_TIERS: { maxHeight: number; creditsPerSecond: number }[] = [
  { maxHeight: 720, creditsPerSecond: 1 },
  { maxHeight: 1080, creditsPerSecond: 2 },
  { maxHeight: 2160, creditsPerSecond: 8 },
];
/** audio: one credit per started 10 seconds. */
const AUDIO_SECONDS_PER_CREDIT = 10;

export function itemCredits(api: JobApi, durationSeconds: number, height = 0): number {
  const seconds = Math.max(0, durationSeconds);
  if (api === 'audio') return Math.ceil(seconds / AUDIO_SECONDS_PER_CREDIT);
  const tier =
    SDR2HDR_TIERS.find((candidate) => height <= candidate.maxHeight) ?? SDR2HDR_TIERS[SDR2HDR_TIERS.length - 1];
  return Math.ceil(seconds) * tier.creditsPerSecond;
}
