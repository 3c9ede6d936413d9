// The speech loudness pipeline: the VAD (Silero) over the decoded audio, then EBU R128 in two passes —
// loudnorm measures, then a pure gain (or gain plus a true-peak limiter) writes the output. Returns a typed
// verdict, never throws for media or process outcomes.
import {
  buildGainLimiterArgs,
  buildLoudnessMeasureArgs,
  buildLoudnormArgs,
  buildPcmExtractArgs,
  canNormaliseLinearly,
  metersWritten,
  type LoudnessMeasurement,
} from './loudness-args';
import { parseEbur128Summary, parseLoudnormReport, type LoudnessReport } from './loudness-reports';
import type { AudioOutputContainer, ProbeResult } from './media.types';
import {
  encodeCeiling,
  encryptedFailure,
  failure,
  processedSeconds,
  processFailure,
  remaining,
  removePartial,
  type PipelineFailure,
  type PipelineRunOptions,
} from './pipeline-outcome';
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
