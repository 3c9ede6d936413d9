// Prices as data (docs/api-decisions.md §4). Credits are estimated per item at submit and settled on the actual
// processed duration, never above the estimate.
import type { JobApi } from './job.types';
import { resolutionPixels } from './output-options';

/**
 * sdr2hdr credits per started second, by the output picture's pixels: up to those of a 16:9 picture of
 * `lines` lines (resolutionPixels: 1280×720, 1920×1080, 3840×2160). A 16:9 picture costs what its
 * resolution's name says; any other shape costs what its pixel count, the encode's work, says.
 */
const SDR2HDR_TIERS: { lines: number; creditsPerSecond: number }[] = [
  { lines: 720, creditsPerSecond: 1 },
  { lines: 1080, creditsPerSecond: 2 },
  { lines: 2160, creditsPerSecond: 8 },
];
/** audio: one credit per started 10 seconds. */
const AUDIO_SECONDS_PER_CREDIT = 10;

/** An item's credits: `pixels` is the output picture's pixel count (outputPixels; 0 for audio). */
export function itemCredits(api: JobApi, durationSeconds: number, pixels = 0): number {
  const seconds = Math.max(0, durationSeconds);
  if (api === 'audio') return Math.ceil(seconds / AUDIO_SECONDS_PER_CREDIT);
  const tier =
    SDR2HDR_TIERS.find((candidate) => pixels <= resolutionPixels(candidate.lines)) ??
    SDR2HDR_TIERS[SDR2HDR_TIERS.length - 1];
  return Math.ceil(seconds) * tier.creditsPerSecond;
}
