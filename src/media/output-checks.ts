// The checks an output must pass before it is charged (docs/api-decisions.md §12): each one names what
// was expected and what the output file measured. One owner of every floor and tolerance; the worker's
// ending (src/processing/item-ending.ts) fails an item whose output misses one, charged 0.
import { writeFile } from 'node:fs/promises';
import type { Mapping, Transfer } from './hdr-mapping';
import type { Quality } from './quality-presets';
import {
  decodedSourceVideo,
  measureAudio,
  measurePcmWav,
  measureSourceVideo,
  measureVideo,
  roundTripSsim,
  type MeasuredAudio,
  type MeasuredVideo,
  type LoudnessFigures,
  type MeasureTools,
  type SourceVideo,
} from './output-measure';
import { sampleEvery } from './round-trip';

export interface OutputCheck {
  /** Stable snake_case name. */
  name: string;
  passed: boolean;
  /** The condition, in words a customer reads ("≥ 0.93", "-16 ± 1 LUFS"). */
  expected: string;
  /** What the output measured (a number where the check is numeric). */
  measured: string | number | null;
}

/**
 * Round-trip luma SSIM floors per quality preset, end to end (output → SDR → against the source), set
 * about 0.03 under the worst correct output measured through the whole service (testsrc2 clips of 1 s,
 * whose saturated edges leak 4:2:0 chroma into luma through the colour step; real pictures score higher):
 *
 *   size      fast ref/expand   balanced ref/expand   best ref/expand
 *   96×54     0.896 / 0.956     0.927 / 0.964         0.928 / 0.962
 *   160×90    0.814 / 0.919     0.847 / 0.938         0.855 / 0.946
 *   320×180   0.821 / 0.941     0.903 / 0.958         0.903 / 0.959
 *   640×360   0.904 / 0.961     0.939 / 0.970         0.948 / 0.972
 *
 * (`reference` scores lower: SDR sits in the bottom of PQ's code range, where 10-bit steps and the
 * encoder's loss weigh more.) Wrong pictures with the right tags score below every floor: the wrong
 * transfer 0.56, a blurred picture 0.62, the light off by 2× 0.75 (320×180). SSIM is a coarse guard: a
 * subtler error (one stop darker, a mislabelled matrix: 0.83–0.84 at 320×180) is not told from a correct
 * tiny clip. Floors first set from 320×180 alone (0.88 balanced) failed correct 160×90 outputs.
 */
export const ROUND_TRIP_SSIM_FLOORS: Record<Quality, number> = { fast: 0.78, balanced: 0.81, best: 0.82 };
/**
 * Frames compared, spread evenly over the output: SSIM of one encode varies little from frame to frame
 * (x265 at a fixed CRF), and ten spread frames see every part of a clip (scene changes, the segments of
 * a split item); the wrong pictures the check exists for (wrong transfer or light, a blur) are wrong on
 * every frame, so any ten show them. The cost is ten conversions and comparisons, not the decodes: a PQ
 * run shares them with its encode and light pass (src/media/round-trip.ts).
 */
export const ROUND_TRIP_SAMPLES = 10;
/** Integrated loudness within this of target_lufs (EBU R128 practice for short-form: ±1 LU). */
export const LOUDNESS_TOLERANCE_LU = 1;
/** True peak at most this (EBU R128 allows −1 dBTP; the pipeline aims at −1.5). */
export const MAX_TRUE_PEAK_DBTP = -1;
/** Audio duration: equal to one codec frame (AAC's 1024 samples), the container's own granularity. */
const AUDIO_FRAME_SAMPLES = 1024;

const fixed = (value: number, digits = 3) => Number(value.toFixed(digits));

/**
 * The stream's codec and profile an HDR output is encoded with: HEVC Main 10 (x265: the MP4 path and a
 * package's HEVC rungs), AV1 Main (SVT-AV1 10-bit: a package's AV1 rungs), as ffprobe names them.
 */
const HDR_CODEC_PROFILES = { hevc: 'hevc main10', av1: 'av1 main' } as const;
export type HdrCodec = keyof typeof HDR_CODEC_PROFILES;

/**
 * Colour description, and for PQ the ST 2086 display and content light levels, wherever the codec carries
 * them (ffprobe's stream and first-frame side data: HEVC's SEI or `mdcv`/`clli`, AV1's metadata OBUs).
 */
export function hdrSignallingCheck(video: MeasuredVideo, transfer: Transfer, codec: HdrCodec = 'hevc'): OutputCheck {
  const tagged = transfer === 'pq' ? 'smpte2084' : 'arib-std-b67';
  const pq = transfer === 'pq';
  const light = pq ? ', ST 2086 and content light levels' : '';
  const expected = `${HDR_CODEC_PROFILES[codec]} 10-bit, bt2020/${tagged}/bt2020nc${light}`;
  const measured =
    `${video.codec} ${video.profile ?? '?'} ${video.bit_depth}-bit, ` +
    `${video.primaries ?? 'untagged'}/${video.transfer ?? 'untagged'}/${video.matrix ?? 'untagged'}` +
    (pq
      ? `, ${video.mastering_display ? 'ST 2086' : 'no ST 2086'} and ${video.content_light ? 'content light levels' : 'no content light levels'}`
      : '');
  return { name: 'hdr_signalling', passed: expected === measured, expected, measured };
}

/** The source's decoded frames at the output's rate (the pipeline keeps the rate: normally the same count). */
export function frameCountCheck(video: MeasuredVideo, source: SourceVideo): OutputCheck {
  const scale = video.frame_rate && source.frameRate ? video.frame_rate / source.frameRate : 1;
  const expected = Math.round(source.frames * scale);
  return { name: 'frame_count', passed: video.frames === expected, expected: String(expected), measured: video.frames };
}

export function videoDurationCheck(video: MeasuredVideo, source: SourceVideo): OutputCheck {
  const frame = 1 / (source.frameRate ?? video.frame_rate ?? 25);
  const passed = Math.abs(video.duration_seconds - source.durationSeconds) <= frame + 1e-6;
  const expected = `${fixed(source.durationSeconds)} s ± ${fixed(frame)} s (one frame)`;
  return { name: 'duration', passed, expected, measured: video.duration_seconds };
}

export function roundTripCheck(score: number, quality: Quality): OutputCheck {
  const floor = ROUND_TRIP_SSIM_FLOORS[quality];
  return { name: 'round_trip_ssim', passed: score >= floor, expected: `≥ ${floor} (${quality})`, measured: score };
}

export function loudnessCheck(audio: MeasuredAudio, targetLufs: number): OutputCheck {
  const measured = audio.integrated_lufs;
  const passed = measured !== null && Math.abs(measured - targetLufs) <= LOUDNESS_TOLERANCE_LU;
  return { name: 'integrated_loudness', passed, expected: `${targetLufs} ± ${LOUDNESS_TOLERANCE_LU} LUFS`, measured };
}

export function truePeakCheck(audio: MeasuredAudio): OutputCheck {
  const measured = audio.true_peak_dbtp;
  const passed = measured !== null && measured <= MAX_TRUE_PEAK_DBTP;
  return { name: 'true_peak', passed, expected: `≤ ${MAX_TRUE_PEAK_DBTP} dBTP`, measured };
}

export function audioDurationCheck(audio: MeasuredAudio, sourceSeconds: number): OutputCheck {
  const frame = AUDIO_FRAME_SAMPLES / (audio.sample_rate || 48000);
  const passed = Math.abs(audio.duration_seconds - sourceSeconds) <= frame + 1e-6;
  const expected = `${fixed(sourceSeconds)} s ± ${fixed(frame)} s (one AAC frame)`;
  return { name: 'duration', passed, expected, measured: audio.duration_seconds };
}

/** The first check an output failed (the item's error names it), or null. */
export function firstFailed(checks: OutputCheck[]): OutputCheck | null {
  return checks.find((check) => !check.passed) ?? null;
}

export interface VideoCheckRequest extends SourceRequest {
  /** The source in one file, or its parts in order (a split item). */
  sources: string[];
  quality: Quality;
  mapping: Mapping;
  transfer: Transfer;
  peakNits: number;
  /** The codec the output was encoded with (default HEVC, the MP4 path's). */
  codec?: HdrCodec;
  /** The round trip as the pipeline measured it reading the written file back (hdr-pipeline.ts); else measured here. */
  roundTripSsim?: number;
  /**
   * The round trip as a package's light pass measured it (package-ladder.ts), counted only when it is this
   * check's own measurement: the same source file, the same sampled frames and sizes as measured here.
   */
  roundTripInRun?: RoundTripInRun;
}

/** A round trip measured in a pass that decoded the output anyway, with what it was measured on. */
export interface RoundTripInRun {
  ssim: number;
  /** The source file compared with (decoded in that pass). */
  source: string;
  /** Every how many frames one was compared (sampleEvery of the frames the pass expected). */
  every: number;
  outputSize: { width: number; height: number };
  sourceSize: { width: number; height: number };
  /** The mapping inverted to go back to SDR. */
  choice: { mapping: Mapping; transfer: Transfer; peakNits: number };
}

/** The in-run round trip when it is the measurement this check would make; else undefined. */
function sameRoundTrip(
  inRun: RoundTripInRun | undefined,
  measured: { source: string; concat: boolean; video: MeasuredVideo; sourceVideo: SourceVideo },
  request: VideoCheckRequest,
): number | undefined {
  if (!inRun || measured.concat || inRun.source !== measured.source) return undefined;
  const { video, sourceVideo } = measured;
  const { mapping, transfer, peakNits } = inRun.choice;
  const same =
    mapping === request.mapping &&
    transfer === request.transfer &&
    peakNits === request.peakNits &&
    inRun.every === sampleEvery(video.frames, ROUND_TRIP_SAMPLES) &&
    inRun.outputSize.width === video.width &&
    inRun.outputSize.height === video.height &&
    inRun.sourceSize.width === sourceVideo.width &&
    inRun.sourceSize.height === sourceVideo.height;
  return same ? inRun.ssim : undefined;
}

/** Measures a video output and its source, then judges them. */
export async function checkVideoOutput(
  request: VideoCheckRequest,
): Promise<{ measured: MeasuredVideo; checks: OutputCheck[] }> {
  const { video, source, concat, sourceVideo } = await measureWithSource(request);
  const ssim =
    request.roundTripSsim ??
    sameRoundTrip(request.roundTripInRun, { source, concat, video, sourceVideo }, request) ??
    (await roundTripSsim({
      ...request,
      source,
      concat,
      sourceVideo,
      outputSize: video,
      choice: { mapping: request.mapping, transfer: request.transfer, peakNits: request.peakNits },
      samples: ROUND_TRIP_SAMPLES,
    }));
  const checks = [
    hdrSignallingCheck(video, request.transfer, request.codec),
    frameCountCheck(video, sourceVideo),
    videoDurationCheck(video, sourceVideo),
    roundTripCheck(ssim, request.quality),
  ];
  return { measured: video, checks };
}

/**
 * What the checks of several outputs of one source share: the source in one file, its packets counted
 * once (measureSourceVideo) for all of them. Parts (a concat list) are measured per output.
 */
export interface SourceRequest extends MeasureTools {
  output: string;
  sources: string[];
  /** measureSourceVideo of `sources[0]` when it is the only source, made once by the caller. */
  sourceCounted?: SourceVideo;
}

/** The output and its source measured side by side (the source's frames decoded when the counts disagree). */
async function measureWithSource(request: SourceRequest) {
  const concat = request.sources.length > 1;
  const source = concat ? `${request.output}.sources.txt` : request.sources[0];
  if (concat)
    await writeFile(source, request.sources.map((path) => `file '${path.replace(/'/g, "'\\''")}'`).join('\n'));
  const [video, counted] = await Promise.all([
    measureVideo(request.output, request),
    !concat && request.sourceCounted ? request.sourceCounted : measureSourceVideo(source, concat, request),
  ]);
  // Packets are counted (no decode); when they disagree with the output, the decoder's own count judges.
  const sourceVideo = frameCountCheck(video, counted).passed
    ? counted
    : await decodedSourceVideo(source, concat, counted, request);
  return { video, source, concat, sourceVideo };
}

/** An SDR rendition of a package (H.264 from the source): BT.709 H.264 High, every frame, the source's length. */
export function sdrSignallingCheck(video: MeasuredVideo): OutputCheck {
  const expected = 'h264 high 8-bit, bt709/bt709/bt709';
  const measured =
    `${video.codec} ${video.profile ?? '?'} ${video.bit_depth}-bit, ` +
    `${video.primaries ?? 'untagged'}/${video.transfer ?? 'untagged'}/${video.matrix ?? 'untagged'}`;
  return { name: 'sdr_signalling', passed: expected === measured, expected, measured };
}

export async function checkSdrVideoOutput(
  request: SourceRequest,
): Promise<{ measured: MeasuredVideo; checks: OutputCheck[] }> {
  const { video, sourceVideo } = await measureWithSource(request);
  const checks = [
    sdrSignallingCheck(video),
    frameCountCheck(video, sourceVideo),
    videoDurationCheck(video, sourceVideo),
  ];
  return { measured: video, checks };
}

export interface AudioCheckRequest extends MeasureTools {
  output: string;
  /** The source's decoded duration (its probe). */
  sourceSeconds: number;
  targetLufs: number;
  /** EBU R128 of the samples written, metered as the run wrote them (PCM WAV only: measurePcmWav). */
  written?: LoudnessFigures;
}

export async function checkAudioOutput(
  request: AudioCheckRequest,
): Promise<{ measured: MeasuredAudio; checks: OutputCheck[] }> {
  const audio =
    (request.written && (await measurePcmWav(request.output, request.written))) ??
    (await measureAudio(request.output, request));
  const checks = [
    loudnessCheck(audio, request.targetLufs),
    truePeakCheck(audio),
    audioDurationCheck(audio, request.sourceSeconds),
  ];
  return { measured: audio, checks };
}
