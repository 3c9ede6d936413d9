// The two media pipelines, composed from the argv builders, the process runner and the VAD.
// They return a typed verdict (never throw for media or process outcomes) so the worker can map
// it straight to an item status and a catalogue code.
import { rm, writeFile } from 'node:fs/promises';
import { buildSdrToHdrArgs, type SdrToHdrArgsInput } from './hdr-args';
import {
  buildGainLimiterArgs,
  buildLoudnessMeasureArgs,
  buildLoudnormArgs,
  buildPcmExtractArgs,
  canNormaliseLinearly,
  metersWritten,
  type LoudnessMeasurement,
} from './loudness-args';
import { outputSize } from './output-geometry';
import { confinedCpuCount } from './cpu-set';
import { buildExpandCube, usesMappingLut, type Mapping, type Transfer } from './hdr-mapping';
import { levelsToWrite, readHdrMetadata, writeHdrMetadata } from './hdr-metadata';
import { measureLightLevels, type LightLevels } from './light-levels';
import { measurePacketEnds } from './packet-end';
import { backToSdr, inverseLutPath, referenceOutputArgs, sampleEvery, writeInverseLut } from './round-trip';
import type { AudioOutputContainer, PipelineErrorCode, ProbeResult } from './media.types';
import {
  DEFAULT_PROGRESS_INTERVAL_MS,
  defaultFfmpegPath,
  ProgressThrottle,
  runFfmpeg,
  runMediaProcess,
  type MediaProcessResult,
  type RunFfmpegResult,
} from './run-ffmpeg';
import { VAD_SAMPLE_RATE, VoiceActivityDetector, type VadOptions, type VadResult } from './vad';

export interface PipelineRunOptions {
  signal?: AbortSignal;
  /** Wall-clock budget for the whole pipeline (all its ffmpeg runs). */
  timeLimitMs?: number;
  onProgress?: (fraction: number) => void;
  progressIntervalMs?: number;
  ffmpegPath?: string;
  ffprobePath?: string;
}

export interface PipelineFailure {
  ok: false;
  code: PipelineErrorCode;
  /** Safe to show a customer. */
  message: string;
  /** For logs only (paths, ffmpeg internals). */
  stderrTail: string[];
  wallMs: number;
}

// --- sdr2hdr ----------------------------------------------------------------------------------------

/** What the argv builder takes, plus how to run it. */
export interface SdrToHdrRequest extends PipelineRunOptions, SdrToHdrArgsInput {
  /**
   * PQ: also measure the round trip's SSIM on this many sampled frames in the light pass, which decodes the
   * written file anyway (`roundTripSsim` of the answer; src/media/round-trip.ts). Unset: not measured.
   */
  roundTripSamples?: number;
}

export interface SdrToHdrSuccess {
  ok: true;
  outputPath: string;
  /** Seconds of output ffmpeg reported writing (falls back to the probed duration). */
  processedSeconds: number;
  width: number;
  height: number;
  /** Where the light went: the mapping, the ST 2086 peak and the picture's measured levels (null for HLG). */
  light: OutputLight;
  /** Round-trip luma SSIM of the written file (roundTripSamples), null when not measured. */
  roundTripSsim: number | null;
  wallMs: number;
  /** The exact argv that ran, for logs. */
  args: string[];
}

export interface OutputLight {
  mapping: Mapping;
  transfer: Transfer;
  masteringPeakNits: number | null;
  maxCll: number | null;
  maxFall: number | null;
}

/** The light block of a finished output (one pass or joined from segments), from its own boxes. */
export async function readOutputLight(path: string, mapping: Mapping, transfer: Transfer): Promise<OutputLight> {
  const none = { mapping, transfer, masteringPeakNits: null, maxCll: null, maxFall: null };
  if (transfer === 'hlg') return none;
  const written = await readHdrMetadata(path);
  if (!written) return none;
  return { ...none, masteringPeakNits: written.peakNits, ...written.levels };
}

// Share of the progress bar: the encode, then decoding the output to measure its light (PQ only).
const ENCODE_WEIGHT = 0.85;

export async function convertSdrToHdr(request: SdrToHdrRequest): Promise<SdrToHdrSuccess | PipelineFailure> {
  const started = Date.now();
  const deadline = request.timeLimitMs !== undefined ? started + request.timeLimitMs : undefined;
  const video = request.probe.video;
  if (!video) return failure('processing_failed', 'The input has no video stream.', [], started);
  if (request.probe.encrypted) return encryptedFailure(started);
  const { mapping, transfer, peakNits } = request;
  const lutPath = usesMappingLut({ mapping, transfer }) ? `${request.output}.mapping.cube` : undefined;
  const throttle = new ProgressThrottle(request.onProgress, request.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  const measures = transfer === 'pq';
  const size = outputSize(video, request.targetHeight);
  // The round trip rides on the light pass: the encode keeps the source's sampled frames, the light pass
  // compares the written file's with them.
  const choice = { mapping, transfer, peakNits };
  const roundTrip =
    measures && request.roundTripSamples
      ? {
          referencePath: `${request.output}.reference.yuv`,
          every: sampleEvery(Math.round(request.probe.durationSeconds * (video.fps ?? 25)), request.roundTripSamples),
          lut: inverseLutPath(request.output, choice),
        }
      : undefined;
  try {
    if (lutPath) {
      const cube = buildExpandCube({
        choice: { mapping, transfer, peakNits },
        sourcePrimaries: video.colorPrimaries,
        sourceTransfer: video.colorTransfer,
      });
      await writeFile(lutPath, cube);
    }
    const args = buildSdrToHdrArgs({ ...request, lutPath, confinedCpus: request.confinedCpus ?? confinedCpuCount() });
    if (roundTrip) {
      args.push(...referenceOutputArgs(video.index, roundTrip.every, video, size, roundTrip.referencePath));
      if (roundTrip.lut) await writeInverseLut(roundTrip.lut, choice, video);
    }
    const run = await runFfmpeg(args, {
      ffmpegPath: request.ffmpegPath,
      durationSeconds: request.probe.durationSeconds,
      maxOutSeconds: encodeCeiling(request.probe.durationSeconds),
      onProgress: (fraction) => throttle.report(measures ? fraction * ENCODE_WEIGHT : fraction),
      progressIntervalMs: 0,
      signal: request.signal,
      timeLimitMs: request.timeLimitMs,
    });
    if (run.status !== 'succeeded') {
      await removePartial(request.output);
      return processFailure(run, started);
    }
    const light: OutputLight = { mapping, transfer, masteringPeakNits: null, maxCll: null, maxFall: null };
    let roundTripSsim: number | null = null;
    if (measures) {
      const measured = await measureLightLevels(request.output, {
        width: size.width,
        height: size.height,
        ffmpegPath: request.ffmpegPath,
        signal: request.signal,
        timeLimitMs: remaining(deadline),
        roundTrip: roundTrip && {
          referencePath: roundTrip.referencePath,
          size,
          every: roundTrip.every,
          back: backToSdr(choice, video, roundTrip.lut),
        },
      });
      if (!measured.ok) {
        await removePartial(request.output);
        const run = measured.run;
        return run ? processFailure(run, started) : failure('processing_failed', 'Processing failed.', [], started);
      }
      const levels = withinMasteringPeak(measured.levels, peakNits);
      try {
        await writeHdrMetadata(request.output, { levels, peakNits });
      } catch (error) {
        await removePartial(request.output);
        return failure('processing_failed', 'Processing failed.', [String(error)], started);
      }
      Object.assign(light, { masteringPeakNits: peakNits, ...levelsToWrite(levels) });
      roundTripSsim = measured.roundTripSsim;
    }
    throttle.complete();
    return {
      ok: true,
      outputPath: request.output,
      processedSeconds: await decodedEnd(request, run.outTimeSeconds),
      width: size.width,
      height: size.height,
      light,
      roundTripSsim,
      wallMs: Date.now() - started,
      args,
    };
  } finally {
    if (lutPath) await rm(lutPath, { force: true });
    if (roundTrip)
      await Promise.all([roundTrip.referencePath, roundTrip.lut].map((path) => path && rm(path, { force: true })));
  }
}

// --- audio: VAD, then EBU R128 two-pass loudnorm ------------------------------------------------------

export interface SpeechLoudnessRequest extends PipelineRunOptions {
  input: string;
  output: string;
  probe: ProbeResult;
  targetLufs: number;
  truePeakDbtp?: number;
  container: AudioOutputContainer;
  vad?: VadOptions;
  /**
   * Meter the samples pass 2 writes, in the same run (WAV only: loudness-args.ts metersWritten); the
   * result's `written`. Off, the output is made alone (the checks bench's "checks off").
   */
  meterWritten?: boolean;
}

export interface LoudnessReport {
  integratedLufs: number;
  truePeakDbtp: number;
  lra: number;
}

export interface SpeechLoudnessSuccess {
  ok: true;
  outputPath: string;
  processedSeconds: number;
  speech: Pick<VadResult, 'speechSeconds' | 'totalSeconds' | 'segments'>;
  input: LoudnessReport;
  /** The output as measured in pass 2 itself (loudnorm's report, or the ebur128 meter after the limiter). */
  output: LoudnessReport;
  /** 'linear': loudnorm applied a pure gain (dynamics kept); 'limited': gain plus a true-peak limiter. */
  normalizationType: 'linear' | 'limited';
  /** EBU R128 of the exact samples written (WAV with meterWritten), null when not metered. */
  written: LoudnessReport | null;
  wallMs: number;
}

// Share of the progress bar per step: decoding for the VAD is quick, the two loudnorm passes dominate.
const VAD_WEIGHT = 0.2;
const MEASURE_WEIGHT = 0.4;

export async function normaliseSpeechLoudness(
  request: SpeechLoudnessRequest,
): Promise<SpeechLoudnessSuccess | PipelineFailure> {
  const started = Date.now();
  const deadline = request.timeLimitMs !== undefined ? started + request.timeLimitMs : undefined;
  const throttle = new ProgressThrottle(request.onProgress, request.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  const step = (offset: number, weight: number) => ({
    ffmpegPath: request.ffmpegPath,
    durationSeconds: request.probe.durationSeconds,
    maxOutSeconds: encodeCeiling(request.probe.durationSeconds),
    signal: request.signal,
    timeLimitMs: remaining(deadline),
    progressIntervalMs: 0,
    // Pass 2's banners, loudnorm's report and the meter's summary all fit.
    stderrLines: 80,
    onProgress: (fraction: number) => throttle.report(offset + fraction * weight),
  });

  if (request.probe.encrypted) return encryptedFailure(started);
  const vad = await detectSpeechInMedia(request, step(0, VAD_WEIGHT));
  if (!vad.ok) return vad.failure;
  if (!vad.result.hasSpeech) {
    return failure('no_speech_detected', 'No speech was found in the input.', [], started);
  }

  const measureRun = await runFfmpeg(buildLoudnessMeasureArgs(request), step(VAD_WEIGHT, MEASURE_WEIGHT));
  if (measureRun.status !== 'succeeded') return processFailure(measureRun, started);
  const measured = withMeteredLoudness(parseLoudnormReport(measureRun.stderrTail), measureRun.stderrTail);
  if (!measured)
    return failure(
      'processing_failed',
      'The loudness of the input could not be measured.',
      measureRun.stderrTail,
      started,
    );
  // Nothing passed the EBU R128 absolute gate (-70 LUFS): there is nothing audible to normalise.
  if (!Number.isFinite(measured.inputI) || measured.inputI <= -70) {
    return failure('no_speech_detected', 'The input is silent: no speech was found.', [], started);
  }

  const pass2 = await applyPass2(request, measured, step);
  if (!pass2.ok) {
    await removePartial(request.output);
    return processFailure(pass2.run, started);
  }
  throttle.complete();
  return {
    ok: true,
    outputPath: request.output,
    processedSeconds: processedSeconds(pass2.run.outTimeSeconds, request.probe.durationSeconds),
    speech: {
      speechSeconds: vad.result.speechSeconds,
      totalSeconds: vad.result.totalSeconds,
      segments: vad.result.segments,
    },
    input: { integratedLufs: measured.inputI, truePeakDbtp: measured.inputTp, lra: measured.inputLra },
    output: pass2.output,
    normalizationType: pass2.normalizationType,
    written: metersWritten(request) ? parseEbur128Summary(pass2.run.stderrTail) : null,
    wallMs: Date.now() - started,
  };
}

/**
 * A limited pass 2 that misses the target by more than this is run again with the gain corrected: the meter
 * prints tenths, so this is "on target" (it was 0.5, and since the limiter only ever takes loudness away the
 * accepted passes sat 0.2–0.4 LU under the target: issue 40, item 7).
 */
export const LIMITER_AIM_LU = 0.1;
const MAX_LIMITER_PASSES = 4;
const PASS2_OFFSET = VAD_WEIGHT + MEASURE_WEIGHT;
const PASS2_WEIGHT = 1 - PASS2_OFFSET;

type Pass2Outcome =
  | { ok: true; run: RunFfmpegResult; output: LoudnessReport; normalizationType: 'linear' | 'limited' }
  | { ok: false; run: MediaProcessResult };

/**
 * Pass 2. loudnorm with the pass-1 measurements when a pure gain fits under the true-peak target
 * (the normal case); otherwise gain + oversampled limiter, metered by ebur128 in the same run and
 * re-run with the gain corrected by the miss (limiting costs loudness: ~1 LU on the espeak fixture
 * at -16 LUFS; loudnorm's dynamic mode has the same miss and hardly responds to a higher aim).
 */
async function applyPass2(
  request: SpeechLoudnessRequest,
  measured: LoudnessMeasurement,
  step: (offset: number, weight: number) => StepOptions,
): Promise<Pass2Outcome> {
  if (canNormaliseLinearly(measured, request)) {
    const run = await runFfmpeg(buildLoudnormArgs({ ...request, measured }), step(PASS2_OFFSET, PASS2_WEIGHT / 2));
    if (run.status !== 'succeeded') return { ok: false, run };
    const report = parseLoudnormReport(run.stderrTail);
    if (report?.normalizationType === 'linear') {
      return {
        ok: true,
        run,
        output: { integratedLufs: report.outputI, truePeakDbtp: report.outputTp, lra: report.outputLra },
        normalizationType: 'linear',
      };
    }
  }
  let gainDb = request.targetLufs - measured.inputI;
  let previous: { gainDb: number; lufs: number } | null = null;
  for (let attempt = 1; ; attempt++) {
    const share = PASS2_WEIGHT / 2 ** attempt;
    const run = await runFfmpeg(buildGainLimiterArgs({ ...request, gainDb }), step(1 - 2 * share, share));
    if (run.status !== 'succeeded') return { ok: false, run };
    const meter = parseEbur128Summary(run.stderrTail);
    const miss = meter ? request.targetLufs - meter.integratedLufs : 0;
    if (!meter || Math.abs(miss) <= LIMITER_AIM_LU || attempt >= MAX_LIMITER_PASSES) {
      const output = meter ?? { integratedLufs: NaN, truePeakDbtp: NaN, lra: NaN };
      return { ok: true, run, output, normalizationType: 'limited' };
    }
    // The limiter takes back part of any gain added (the louder, the more it limits): step by the loudness
    // per dB of gain the last two passes showed (1 before there are two; at least 0.3, so one pass cannot
    // overshoot by more than a few dB).
    const slope = previous ? (meter.integratedLufs - previous.lufs) / (gainDb - previous.gainDb) : 1;
    previous = { gainDb, lufs: meter.integratedLufs };
    gainDb += miss / Math.min(Math.max(Number.isFinite(slope) ? slope : 1, 0.3), 1);
  }
}

/** pass 1's integrated loudness from the ebur128 meter beside loudnorm (loudness-args.ts INPUT_METER), when it printed. */
function withMeteredLoudness(measured: LoudnessMeasurement | null, stderr: string[]): LoudnessMeasurement | null {
  const meter = parseEbur128Summary(stderr);
  if (!measured || !meter || !Number.isFinite(meter.integratedLufs)) return measured;
  return { ...measured, inputI: meter.integratedLufs };
}

/** Reads the summary ffmpeg's ebur128 filter prints at the end of a run. */
export function parseEbur128Summary(stderrLines: string[]): LoudnessReport | null {
  const text = stderrLines.join('\n');
  const summary = text.slice(text.lastIndexOf('Summary:'));
  const integrated = /I:\s+(-?[\d.]+|-inf) LUFS/.exec(summary);
  if (text.lastIndexOf('Summary:') < 0 || !integrated) return null;
  const lra = /LRA:\s+(-?[\d.]+) LU/.exec(summary);
  const peak = /Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary);
  return {
    integratedLufs: Number(integrated[1]),
    truePeakDbtp: peak ? Number(peak[1]) : NaN,
    lra: lra ? Number(lra[1]) : NaN,
  };
}

interface StepOptions {
  ffmpegPath?: string;
  stderrLines?: number;
  durationSeconds: number;
  signal?: AbortSignal;
  timeLimitMs?: number;
  onProgress: (fraction: number) => void;
}

/** Streams 16 kHz mono PCM from ffmpeg's stdout straight into the VAD (Silero): memory stays flat for any length. */
async function detectSpeechInMedia(
  request: SpeechLoudnessRequest,
  step: StepOptions,
): Promise<{ ok: true; result: VadResult } | { ok: false; failure: PipelineFailure }> {
  const started = Date.now();
  const detector = await VoiceActivityDetector.create(request.vad);
  const expectedBytes = Math.max(1, request.probe.durationSeconds * VAD_SAMPLE_RATE * 2);
  let bytes = 0;
  const run = await runMediaProcess(step.ffmpegPath ?? defaultFfmpegPath(), buildPcmExtractArgs(request), {
    signal: step.signal,
    timeLimitMs: step.timeLimitMs,
    // ffmpeg decodes faster than the model reads: its output waits for each chunk to be read.
    onStdout: (chunk) => {
      bytes += chunk.length;
      return detector.push(chunk).then(() => step.onProgress(Math.min(1, bytes / expectedBytes)));
    },
  });
  if (run.status !== 'succeeded') return { ok: false, failure: processFailure(run, started) };
  return { ok: true, result: await detector.finish() };
}

// --- loudnorm's JSON report ---------------------------------------------------------------------------

export interface LoudnormReport extends LoudnessMeasurement {
  outputI: number;
  outputTp: number;
  outputLra: number;
  normalizationType: string;
}

/** Reads the last JSON block loudnorm printed (print_format=json) from ffmpeg's stderr lines. */
export function parseLoudnormReport(stderrLines: string[]): LoudnormReport | null {
  const text = stderrLines.join('\n');
  const blocks = text.match(/\{[^{}]*"input_i"[^{}]*\}/g);
  if (!blocks) return null;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(blocks[blocks.length - 1]) as Record<string, unknown>;
  } catch {
    return null;
  }
  const num = (key: string): number => (typeof json[key] === 'string' ? Number(json[key]) : NaN);
  return {
    inputI: num('input_i'),
    inputTp: num('input_tp'),
    inputLra: num('input_lra'),
    inputThresh: num('input_thresh'),
    targetOffset: num('target_offset'),
    outputI: num('output_i'),
    outputTp: num('output_tp'),
    outputLra: num('output_lra'),
    normalizationType: typeof json.normalization_type === 'string' ? json.normalization_type : 'unknown',
  };
}

// --- shared -------------------------------------------------------------------------------------------

const OVERRAN =
  'The source holds more media than its headers declare (and than was priced): it was stopped at the priced length. It was not processed and you were not charged; submit it again re-wrapped (e.g. ffmpeg -c copy) to have it priced as it is.';

/**
 * The most an encode may write: what was probed (and checked against the price), plus a second for the
 * last frame's or audio packet's length and ffmpeg's progress granularity. An honest file never gets near it.
 */
export function encodeCeiling(probedSeconds: number): number {
  return probedSeconds + 1;
}

const PROCESS_FAILURES: Record<Exclude<MediaProcessResult['status'], 'succeeded'>, [PipelineErrorCode, string]> = {
  timeout: ['timeout', 'Processing took longer than the job time limit.'],
  aborted: ['job_cancelled', 'The job was cancelled.'],
  killed: ['out_of_memory', 'The media process ran out of memory.'],
  failed: ['processing_failed', 'Processing failed.'],
};

function processFailure(run: MediaProcessResult & { overran?: boolean }, started: number): PipelineFailure {
  if (run.overran) return failure('source_changed', OVERRAN, run.stderrTail, started);
  const status = run.status === 'succeeded' ? 'failed' : run.status;
  const [code, message] = PROCESS_FAILURES[status];
  return failure(code, message, run.stderrTail, started);
}

function failure(code: PipelineErrorCode, message: string, stderrTail: string[], started: number): PipelineFailure {
  return { ok: false, code, message, stderrTail, wallMs: Date.now() - started };
}

// A probe made with allowEncrypted (at submit) can reach a pipeline: decoding CENC "works" and yields garbage.
function encryptedFailure(started: number): PipelineFailure {
  return failure('drm_protected', 'The input is encrypted (DRM/CENC) and cannot be processed.', [], started);
}

function remaining(deadline: number | undefined): number | undefined {
  // A spent budget still gets 1 ms so the step starts and is killed as 'timeout' through the same path.
  return deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
}

/**
 * MaxCLL and MaxFALL as stated in the file: the decoded picture's, at most the mastering display's peak. The
 * signal never exceeds the peak before the encode (the mapping limits every channel); only the 4:2:0
 * reconstruction on one-pixel saturated edges overshoots (a few hundred pixels of a frame), light a
 * mastering display clips. Platform QC rejects MaxCLL above the mastering peak, and a TV tone-maps to it.
 */
export function withinMasteringPeak(levels: LightLevels, peakNits: number): LightLevels {
  const maxCll = Math.min(levels.maxCll, peakNits);
  return { maxCll, maxFall: Math.min(levels.maxFall, maxCll) };
}

/**
 * Seconds of video made: the end of the output's last frame (pts + duration, read from its packets), at most
 * the source's length. ffmpeg's progress `out_time` trails it by the frames still in the encoder's
 * reorder delay (90 frames at 30 fps read 2.900 s); falls back to it when the packets cannot be read.
 */
async function decodedEnd(request: SdrToHdrRequest, outTimeSeconds: number | null): Promise<number> {
  const ends = await measurePacketEnds(request.output, {
    ffprobePath: request.ffprobePath,
    timeoutMs: 30_000,
    signal: request.signal,
  }).catch(() => null);
  const videoEnd = ends?.get(0)?.endSeconds;
  if (videoEnd === undefined || !(videoEnd > 0)) return processedSeconds(outTimeSeconds, request.probe.durationSeconds);
  return Math.min(videoEnd, request.probe.durationSeconds);
}

function processedSeconds(outTimeSeconds: number | null, probedSeconds: number): number {
  return outTimeSeconds !== null && outTimeSeconds > 0 ? Math.min(outTimeSeconds, probedSeconds) : probedSeconds;
}

/** A killed or failed ffmpeg leaves a truncated file behind; it must never be mistaken for an output. */
async function removePartial(path: string): Promise<void> {
  await rm(path, { force: true });
}
