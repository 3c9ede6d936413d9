// Where a long sdr2hdr item is cut (segments.ts does the cutting): whether it splits at all and the cut
// points on keyframes. Pure arithmetic, shared by the worker's split and the submit's time estimate, so
// the API loads it without the split/join tools.

export interface PlannedSegment {
  /** Where the segment starts in the source (a keyframe; 0 for the first). */
  start: number;
  duration: number;
}

/**
 * Whether an item is encoded in segments: sdr2hdr, at least twice `segmentSeconds` long (SEGMENT_SECONDS;
 * 0 never splits). The worker decides with it, and the estimate models the job with it.
 */
export function splitsIntoSegments(api: string, durationSeconds: number, segmentSeconds: number): boolean {
  return api === 'sdr2hdr' && segmentSeconds > 0 && durationSeconds >= 2 * segmentSeconds;
}

/**
 * Cut points on keyframes: each segment runs from its keyframe to the first keyframe at least
 * `segmentSeconds` later, and the last one is never shorter than half a segment (it joins the one
 * before instead). One segment means: do not split.
 */
export function planSegments(keyframes: number[], durationSeconds: number, segmentSeconds: number): PlannedSegment[] {
  if (!(segmentSeconds > 0) || !(durationSeconds > 0)) return [{ start: 0, duration: durationSeconds }];
  const starts = [0];
  for (const time of [...new Set(keyframes)].sort((a, b) => a - b)) {
    if (time - starts[starts.length - 1] >= segmentSeconds && durationSeconds - time >= segmentSeconds / 2) {
      starts.push(time);
    }
  }
  return starts.map((start, i) => ({
    start,
    duration: round3((i + 1 < starts.length ? starts[i + 1] : durationSeconds) - start),
  }));
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Frames in one HLS segment of a package (every rung cuts on the same frames: hls/ladder-args.ts). */
export function segmentFrames(segmentSeconds: number, fps: number | null): number {
  return Math.max(1, Math.round(segmentSeconds * (fps ?? 25)));
}

/**
 * The units of a package item (hls/package-parts.ts; the estimate plans with it too): `unitSeconds` (SEGMENT_SECONDS) rounded to a whole number of HLS segments
 * of `segmentSeconds`, each starting on a frame; the last one is never shorter than half a unit (it joins
 * the one before). One unit means: do not split.
 */
export function planPackageUnits(
  durationSeconds: number,
  fps: number | null,
  segmentSeconds: number,
  unitSeconds: number,
): PlannedSegment[] {
  const rate = fps && fps > 0 ? fps : 25;
  const unitFrames = Math.max(1, Math.floor(unitSeconds / segmentSeconds)) * segmentFrames(segmentSeconds, rate);
  const totalFrames = Math.round(durationSeconds * rate);
  if (!(unitSeconds > 0) || totalFrames < 2 * unitFrames) return [{ start: 0, duration: durationSeconds }];
  const starts: number[] = [];
  for (let frame = 0; totalFrames - frame >= unitFrames / 2 || frame === 0; frame += unitFrames) starts.push(frame);
  return starts.map((frame, i) => {
    const start = round6(frame / rate);
    const end = i + 1 < starts.length ? round6(starts[i + 1] / rate) : durationSeconds;
    return { start, duration: round6(end - start) };
  });
}

/**
 * The window a unit decodes: from half a frame before its first frame to half a frame before the next
 * unit's, so every frame falls in exactly one unit whatever the rounding of the times; the last unit reads
 * to the end (null).
 */
export function partWindow(
  unit: PlannedSegment,
  fps: number | null,
  last: boolean,
): { startSeconds: number; durationSeconds: number | null } {
  const half = 0.5 / (fps && fps > 0 ? fps : 25);
  const startSeconds = unit.start > 0 ? round6(unit.start - half) : 0;
  if (last) return { startSeconds, durationSeconds: null };
  return { startSeconds, durationSeconds: round6(unit.start + unit.duration - half - startSeconds) };
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
