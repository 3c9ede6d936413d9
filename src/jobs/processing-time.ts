// How long an item takes to process, from encode speeds measured on the reference machine (2 cores,
// Debian ffmpeg 5.1, x265 taking both cores; /work/shared/MEDIA.md "Speed"). An estimate shown before
// a submit: an item's processing time on one idle worker, and the job's on the region's workers, never
// the wait in the queue.
import { DEFAULT_X265_PRESET, outputSize, type X265Preset } from '../media/ffmpeg-args';
import type { JobApi } from './job.types';

/**
 * x265 seconds of work per second of media ≈ base + perMegapixel × (output megapixels per second).
 * Fitted through MEDIA.md's two measured points per preset, 10 s 640×360 and 10 s 1920×1080, both
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
 * Seconds from the first item starting to the last one ending when the region's `workers` run the
 * job's items: each item is its own unit of queue work, taken in order by whichever worker is free
 * first (one worker: the sum; a worker per item: the longest). Time waiting behind other jobs is not
 * counted, nor the split of a long item into segments (its own time stays one worker's).
 */
export function jobProcessingSeconds(itemSeconds: number[], workers: number): number {
  // When each worker is next free; a region with no live worker is refused before this is asked.
  const freeAt: number[] = new Array<number>(Math.max(1, Math.min(workers, itemSeconds.length))).fill(0);
  for (const seconds of itemSeconds) {
    const next = freeAt.indexOf(Math.min(...freeAt));
    freeAt[next] += seconds;
  }
  return Math.max(0, ...freeAt);
}
