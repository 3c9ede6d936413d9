// The output picture's size for a requested resolution: pure arithmetic, shared by the submit's price and
// time estimates and the worker's encode (which must agree on it), so the API loads it without any argv.
import type { VideoStreamInfo } from './media.types';

/**
 * The encoded picture size: the downscale if one applies, else the source size rounded down to even
 * sides (4:2:0 needs them; a 1-pixel resize is invisible, a failed job is not).
 */
export function outputSize(
  video: Pick<VideoStreamInfo, 'width' | 'height'>,
  targetHeight?: number,
): {
  width: number;
  height: number;
} {
  const scaled = downscaleSize(video.width, video.height, targetHeight);
  if (scaled) return scaled;
  return {
    width: Math.max(2, video.width - (video.width % 2)),
    height: Math.max(2, video.height - (video.height % 2)),
  };
}

/** Size for a downscale to `targetLines` on the short side, keeping the aspect with even sides; null = keep the source size. */
export function downscaleSize(
  width: number,
  height: number,
  targetLines?: number,
): { width: number; height: number } | null {
  if (targetLines === undefined) return null;
  if (!Number.isInteger(targetLines) || targetLines < 2 || targetLines % 2 !== 0) {
    throw new RangeError(`targetHeight must be a positive even integer, got ${targetLines}`);
  }
  const shortSide = Math.min(width, height);
  if (shortSide <= targetLines) return null;
  const longSide = evenRound((Math.max(width, height) * targetLines) / shortSide);
  return width >= height ? { width: longSide, height: targetLines } : { width: targetLines, height: longSide };
}

function evenRound(value: number): number {
  return Math.max(2, Math.round(value / 2) * 2);
}
