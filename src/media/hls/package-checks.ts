// The checks a package passes beyond each rung's own (output-checks.ts judges every rung like a file):
// players switch renditions at segment boundaries, so every rung's segments must start on the same
// timestamps, and Apple's authoring rules want segments of 2–6 s (the last may be shorter).
import type { OutputCheck } from '../output-checks';

/** Apple HLS authoring specification: segment durations (s), the last segment excepted. */
export const SEGMENT_SECONDS_RANGE = { min: 2, max: 6 };

const fixed = (value: number) => Number(value.toFixed(3));

export interface RenditionBoundaries {
  folder: string;
  /** Segment starts (s). */
  starts: number[];
  /** Segment durations (s), in order. */
  durations: number[];
}

/** Every rung has as many segments as the first, each starting within one frame of the first rung's. */
export function segmentAlignmentCheck(renditions: RenditionBoundaries[], frameRate: number): OutputCheck {
  const frame = 1 / (frameRate > 0 ? frameRate : 25);
  const expected = `every rendition's segments start within ${fixed(frame)} s (one frame) of each other`;
  const [first, ...others] = renditions;
  let worst = 0;
  for (const other of others) {
    if (other.starts.length !== first.starts.length) {
      const measured = `${first.folder} has ${first.starts.length} segments, ${other.folder} ${other.starts.length}`;
      return { name: 'segment_alignment', passed: false, expected, measured };
    }
    other.starts.forEach((start, i) => (worst = Math.max(worst, Math.abs(start - first.starts[i]))));
  }
  return { name: 'segment_alignment', passed: worst <= frame + 1e-6, expected, measured: fixed(worst) };
}

/** Every segment but each rendition's last lasts 2–6 s. */
export function segmentDurationCheck(renditions: RenditionBoundaries[]): OutputCheck {
  const { min, max } = SEGMENT_SECONDS_RANGE;
  const inner = renditions.flatMap((rendition) => rendition.durations.slice(0, -1));
  const shortest = inner.length ? Math.min(...inner) : null;
  const longest = Math.max(0, ...renditions.flatMap((rendition) => rendition.durations));
  const passed = longest <= max + 1e-6 && (shortest === null || shortest >= min - 1e-6);
  return {
    name: 'segment_durations',
    passed,
    expected: `${min}–${max} s (the last segment may be shorter)`,
    measured: shortest === null ? `${fixed(longest)} s` : `${fixed(shortest)}–${fixed(longest)} s`,
  };
}
