// Prices as data (docs/api-decisions.md §4). Credits are estimated per item at submit and settled on the actual
// processed duration, never above the estimate. A package costs the sum of its rungs, each priced as a picture.
import { itemRungs } from '../media/ladder';
import { knownOutputSize } from '../media/output-geometry';
import type { HdrOutputSpec, OutputSpec, RungSpec } from '../media/output-spec';
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

/**
 * An item's credits for what its spec makes of its source: a file is one picture (the spec's target
 * lines, never above the source); a package is every rung of the item's ladder (ladder.ts itemRungs, the
 * rungs the worker encodes), each priced as a picture of its own pixels for the item's seconds.
 */
export function specCredits(
  spec: OutputSpec,
  durationSeconds: number,
  source: { width: number | null; height: number | null },
): number {
  if (spec.api === 'audio') return itemCredits('audio', durationSeconds);
  if (spec.package !== 'hls' || !spec.ladder) {
    const size = knownOutputSize(source, spec.targetLines);
    return itemCredits('sdr2hdr', durationSeconds, size ? size.width * size.height : 0);
  }
  return sumCredits(durationSeconds, packageRungs(spec, source));
}

/** The rungs of an item's package (ladder.ts itemRungs), for a source whose picture size is known. */
export function packageRungs(spec: HdrOutputSpec, source: { width: number | null; height: number | null }): RungSpec[] {
  if (!spec.ladder) throw new Error('a file has no rungs');
  if (source.width === null || source.height === null) throw new Error('a ladder priced for a source of no size');
  return itemRungs(spec.ladder, spec.transfer, { width: source.width, height: source.height });
}

/** Credits of pictures made for `durationSeconds` each: a package's rungs, priced one by one (itemCredits). */
export function sumCredits(durationSeconds: number, pictures: { width: number; height: number }[]): number {
  return pictures.reduce((sum, { width, height }) => sum + itemCredits('sdr2hdr', durationSeconds, width * height), 0);
}
