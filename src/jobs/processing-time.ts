// How long an item takes to process, from encode speeds measured on the reference machine (2 cores,
// Debian ffmpeg 5.1, x265 taking both cores; docs/media.md "Encode speed"). An estimate shown before
// a submit: an item's processing time on one idle worker, and the job's on the region's workers, never
// the wait in the queue.
import { DEFAULT_X265_PRESET, type X265Preset } from '../media/encoder-settings';
import { outputSize } from '../media/output-geometry';
import type { RungSpec } from '../media/output-spec';
import { planPackageUnits, planSegments, splitsIntoSegments, type PlannedSegment } from '../media/segment-plan';
import type { JobApi } from './job.types';

/**
 * x265 seconds of work per second of media ≈ base + perMegapixel × (output megapixels per second).
 * Fitted through docs/media.md's two measured points per preset, 10 s 640×360 and 10 s 1920×1080, both
 * 30 fps: veryfast 6.5 s and 35 s, ultrafast 3.5 s and 21 s, medium 7.4 s and 42 s.
 */
const X265_SPEED = {
  ultrafast: { base: 0.132, perMegapixel: 0.0316 },
  veryfast: { base: 0.294, perMegapixel: 0.0515 },
  medium: { base: 0.31, perMegapixel: 0.0626 },
} as const;
export type MeasuredPreset = keyof typeof X265_SPEED;

/** A preset not measured here is priced as the slowest measured one (a lower bound for slower presets). */
function speedOf(preset: X265Preset): { base: number; perMegapixel: number } {
  return preset in X265_SPEED ? X265_SPEED[preset as MeasuredPreset] : X265_SPEED.medium;
}
/** The probe at submit does not report a frame rate; 30 fps is the rate the speeds were measured at. */
const ASSUMED_FPS = 30;
/**
 * The speech pipeline (voice activity detection, then a two-pass EBU R128 loudnorm) decodes the audio
 * about three times; 0.05 s of work per second of speech is a conservative bound on this machine kind.
 */
const AUDIO_SECONDS_PER_SECOND = 0.05;
/** Per item: ffmpeg start, the worker's own probe, storing the output (≈ 1 s measured at 360p). */
const ITEM_OVERHEAD_SECONDS = 1;
/**
 * A segmented item's split and join (stream copies, one worker each): 0.93 s and 0.27 s for 60 s of
 * 720p (README "Segments: one long item over many workers", `--only=segments`), 0.02 s per second.
 */
const SPLIT_AND_JOIN_SECONDS_PER_SECOND = 0.02;

/**
 * A package's rungs in other codecs, against x265 veryfast at the same picture (their presets are fixed:
 * src/media/hls/ladder-args.ts). CPU seconds, decode subtracted, 4 s testsrc2 scaled from 1080p to 1080p /
 * 720p / 360p on this machine: x264 medium 0.36 / 0.38 / 0.46, SVT-AV1 preset 8 10-bit 1.77 / 1.22 / 1.50
 * (docs/api-guide.md "Processing time" has the command).
 */
const RUNG_COST_OF_X265_VERYFAST = { h264: 0.4, av1: 1.5 } as const;

export interface EstimatedItem {
  durationSeconds: number;
  /** The source's picture; null for audio. */
  width: number | null;
  height: number | null;
}

/**
 * Seconds of processing for one item on one worker, rounded up to a whole second. `targetLines` is the
 * requested resolution's short side (undefined = the source's size), scaled as the worker scales it;
 * `preset` is the encoder preset of the job's `output.quality` (src/media/quality-presets.ts).
 */
export function itemProcessingSeconds(
  api: JobApi,
  item: EstimatedItem,
  targetLines?: number,
  preset: X265Preset = DEFAULT_X265_PRESET,
): number {
  const media = Math.max(0, item.durationSeconds);
  if (api === 'audio' || !item.width || !item.height)
    return Math.ceil(ITEM_OVERHEAD_SECONDS + media * AUDIO_SECONDS_PER_SECOND);
  const speed = speedOf(preset);
  const picture = outputSize({ width: item.width, height: item.height }, targetLines);
  const megapixelsPerSecond = (picture.width * picture.height * ASSUMED_FPS) / 1e6;
  return Math.ceil(ITEM_OVERHEAD_SECONDS + media * (speed.base + speed.perMegapixel * megapixelsPerSecond));
}

/**
 * Seconds of processing for an HLS package on one worker, rounded up: one ffmpeg run encodes every rung
 * (src/media/hls/ladder-args.ts), so the item's overhead is paid once and each rung adds its encode — an
 * HEVC rung at the job's x265 preset as a file of that picture would, an H.264 or AV1 rung weighted by its
 * measured cost (RUNG_COST_OF_X265_VERYFAST).
 */
export function packageProcessingSeconds(
  durationSeconds: number,
  rungs: Pick<RungSpec, 'codec' | 'width' | 'height'>[],
  preset: X265Preset = DEFAULT_X265_PRESET,
): number {
  const media = Math.max(0, durationSeconds);
  const perSecond = rungs.reduce((sum, rung) => {
    const megapixelsPerSecond = (rung.width * rung.height * ASSUMED_FPS) / 1e6;
    const speed = rung.codec === 'hevc' ? speedOf(preset) : X265_SPEED.veryfast;
    const share = rung.codec === 'hevc' ? 1 : RUNG_COST_OF_X265_VERYFAST[rung.codec];
    return sum + share * (speed.base + speed.perMegapixel * megapixelsPerSecond);
  }, 0);
  return Math.ceil(ITEM_OVERHEAD_SECONDS + media * perSecond);
}

/**
 * The queue work one item becomes on the workers: one unit, the item; or, for an item the worker encodes
 * in segments (splitsIntoSegments), one unit per segment, planned as the worker plans them — a file's
 * on keyframes (planSegments, assumed one a second: the worker reads the source's real ones), a package's
 * in whole HLS segments of `hlsSegmentSeconds` (planPackageUnits) —
 * each carrying its share of the encode and the per-unit overhead, plus the split before them and the
 * join after them, one worker each (`serialSeconds`).
 */
export interface ItemWork {
  units: number[];
  serialSeconds: number;
}

export function itemWork(
  api: JobApi,
  durationSeconds: number,
  itemSeconds: number,
  segmentSeconds: number,
  hlsSegmentSeconds?: number,
): ItemWork {
  if (!splitsIntoSegments(api, durationSeconds, segmentSeconds)) return { units: [itemSeconds], serialSeconds: 0 };
  // A package is cut into units of whole HLS segments on frames (its worker's plan, at the assumed rate);
  // a file on its keyframes, assumed one a second here (the worker reads the source's real ones).
  const plan: PlannedSegment[] =
    hlsSegmentSeconds === undefined
      ? planSegments(
          Array.from({ length: Math.floor(durationSeconds) + 1 }, (_, second) => second),
          durationSeconds,
          segmentSeconds,
        )
      : planPackageUnits(durationSeconds, ASSUMED_FPS, hlsSegmentSeconds, segmentSeconds);
  if (plan.length < 2) return { units: [itemSeconds], serialSeconds: 0 };
  const encode = Math.max(0, itemSeconds - ITEM_OVERHEAD_SECONDS);
  return {
    units: plan.map((segment) => Math.ceil(ITEM_OVERHEAD_SECONDS + (encode * segment.duration) / durationSeconds)),
    serialSeconds: Math.ceil(durationSeconds * SPLIT_AND_JOIN_SECONDS_PER_SECOND),
  };
}

/**
 * Seconds from the first item starting to the last one ending when the region's `workers` run the
 * job: each unit (an item, or a segment of one) is its own unit of queue work, taken in order by
 * whichever worker is free first (one worker: the sum; a worker per unit: the longest), plus the
 * longest split-and-join of a segmented item. Time waiting behind other jobs is not counted.
 */
export function jobProcessingSeconds(items: ItemWork[], workers: number): number {
  const units = items.flatMap((item) => item.units);
  // When each worker is next free; a region with no live worker is refused before this is asked.
  const freeAt: number[] = new Array<number>(Math.max(1, Math.min(workers, units.length))).fill(0);
  for (const seconds of units) {
    const next = freeAt.indexOf(Math.min(...freeAt));
    freeAt[next] += seconds;
  }
  return Math.max(0, ...freeAt) + Math.max(0, ...items.map((item) => item.serialSeconds));
}
