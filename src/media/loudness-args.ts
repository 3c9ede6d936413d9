// The speech-loudness audio argv: EBU R128 two-pass loudness (loudnorm measure, then a linear gain or a
// gain + true-peak limiter), and the 16 kHz PCM the speech detector reads. Pure, no I/O.
import { AUDIO_AAC_BITRATE, commonHead, inputArgs, outputPath } from './ffmpeg-input';
import type { AudioOutputContainer, ProbeResult } from './media.types';

export const DEFAULT_TRUE_PEAK_DBTP = -1.5;
/** Loudness-range target; raised to the measured LRA in pass 2 so loudnorm can stay linear (a pure gain). */
export const DEFAULT_LRA = 11;
const LOUDNORM_MAX_LRA = 50;
const AAC_SAMPLE_RATES = new Set([8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]);

export interface LoudnessTargets {
  targetLufs: number;
  truePeakDbtp?: number;
}

export interface LoudnessMeasureArgsInput extends LoudnessTargets {
  input: string;
  probe: ProbeResult;
  rwTimeoutUs?: number;
}

/**
 * Pass 1: loudnorm measures the whole input and prints its JSON report (at info level, on stderr), and an
 * ebur128 meter beside it prints its summary (INPUT_METER).
 */
export function buildLoudnessMeasureArgs(options: LoudnessMeasureArgsInput): string[] {
  const audio = requireAudio(options.probe, 'buildLoudnessMeasureArgs');
  const targets = loudnessTargets(options);
  const filter = `loudnorm=I=${targets.i}:TP=${targets.tp}:LRA=${DEFAULT_LRA}:print_format=json`;
  return [
    ...commonHead('info'),
    ...inputArgs(options.input, options.rwTimeoutUs),
    '-filter_complex',
    `[0:${audio.index}]asplit=2[loudnorm][meter];[loudnorm]${filter}[measured];[meter]${INPUT_METER},anullsink`,
    '-map',
    '[measured]',
    '-f',
    'null',
    '-',
  ];
}

/**
 * Pass 1's second meter: EBU R128 integrated loudness by ffmpeg's ebur128 (the meter the output checks and an
 * auditor use). loudnorm's own reading of speech is ~0.2 LU lower (it meters a 192 kHz resampling of the input
 * in its own blocks), so a gain from it overshot the target by 0.2–0.3 LU (issue 40, item 7); the pipeline
 * takes the integrated loudness from this meter and the rest (true peak, LRA, threshold) from loudnorm.
 */
const INPUT_METER = 'ebur128=framelog=verbose';

/** The pass-1 numbers pass 2 needs, as loudnorm printed them. */
export interface LoudnessMeasurement {
  inputI: number;
  inputTp: number;
  inputLra: number;
  inputThresh: number;
  targetOffset: number;
}

export interface LoudnormArgsInput extends LoudnessTargets {
  input: string;
  output: string;
  probe: ProbeResult;
  measured: LoudnessMeasurement;
  container: AudioOutputContainer;
  rwTimeoutUs?: number;
  /** Meter the samples written (WAV only): see audioPassTwoArgs. */
  meterWritten?: boolean;
}

/** Pass 2 when canNormaliseLinearly: loudnorm applies the gain found in pass 1 as a pure gain, writes WAV or M4A. */
export function buildLoudnormArgs(options: LoudnormArgsInput): string[] {
  const audio = requireAudio(options.probe, 'buildLoudnormArgs');
  const targets = loudnessTargets(options);
  const m = options.measured;
  // loudnorm treats measured_LRA=0 as "not given" and drops to dynamic mode; a steady signal can measure 0.
  const measuredLra = Math.max(m.inputLra, 0.1);
  const lra = Math.min(LOUDNORM_MAX_LRA, Math.max(DEFAULT_LRA, Math.ceil(measuredLra * 10) / 10));
  const filter = [
    `loudnorm=I=${targets.i}`,
    `TP=${targets.tp}`,
    `LRA=${lra}`,
    `measured_I=${m.inputI}`,
    `measured_TP=${m.inputTp}`,
    `measured_LRA=${measuredLra}`,
    `measured_thresh=${m.inputThresh}`,
    `offset=${m.targetOffset}`,
    'linear=true',
    // The pass-2 report tells whether loudnorm stayed linear and what it measured at its output.
    'print_format=json',
  ].join(':');
  // loudnorm works at 192 kHz when not linear: bring the output back to the source rate.
  return audioPassTwoArgs(options, audio.index, filter, outputSampleRate(audio.sampleRate, options.container));
}

/** Whether pass 2 meters what it writes: only PCM, whose encoder writes the metered samples unchanged. */
export function metersWritten(options: { container: AudioOutputContainer; meterWritten?: boolean }): boolean {
  return options.meterWritten === true && options.container === 'wav';
}

/**
 * The argv both second passes share: map the judged audio stream, filter, resample, encode. When it
 * meters what it writes (metersWritten), the signal is quantised to the file's own s16 in the graph and
 * split: one copy goes to the PCM encoder (which writes those samples byte for byte), the other to an
 * ebur128 meter with true peak — the output check's loudness without a second pass over the file.
 */
function audioPassTwoArgs(
  options: {
    input: string;
    output: string;
    container: AudioOutputContainer;
    rwTimeoutUs?: number;
    meterWritten?: boolean;
  },
  audioIndex: number,
  filter: string,
  sampleRate: number,
): string[] {
  if (metersWritten(options)) {
    const written = `${filter},aresample=${sampleRate},aformat=sample_fmts=s16:sample_rates=${sampleRate}`;
    return [
      ...commonHead('info'),
      ...inputArgs(options.input, options.rwTimeoutUs),
      '-filter_complex',
      `[0:${audioIndex}]${written},asplit=2[written][meter];[meter]${WRITTEN_METER},anullsink`,
      '-map',
      '[written]',
      ...audioOutputCodecArgs(options.container),
      outputPath(options.output),
    ];
  }
  return [
    ...commonHead('info'),
    ...inputArgs(options.input, options.rwTimeoutUs),
    '-map',
    `0:${audioIndex}`,
    '-af',
    filter,
    '-ar',
    String(sampleRate),
    ...audioOutputCodecArgs(options.container),
    outputPath(options.output),
  ];
}

/**
 * loudnorm's own rule for staying linear: the gain must not push the true peak over the target
 * (the LRA condition is always met, see buildLoudnormArgs). When it fails, loudnorm switches to its
 * dynamic mode, which on short speech lands about 1 LU under the target and barely moves when aimed
 * higher; the pipeline then uses buildGainLimiterArgs instead.
 */
export function canNormaliseLinearly(measured: LoudnessMeasurement, targets: LoudnessTargets): boolean {
  const { i, tp } = loudnessTargets(targets);
  return measured.inputTp + (i - measured.inputI) <= tp;
}

export interface GainLimiterArgsInput {
  input: string;
  output: string;
  probe: ProbeResult;
  /** Gain in dB before the limiter (target minus measured integrated loudness, then corrected). */
  gainDb: number;
  truePeakDbtp?: number;
  container: AudioOutputContainer;
  rwTimeoutUs?: number;
  /** Meter the samples written (WAV only): see audioPassTwoArgs. */
  meterWritten?: boolean;
}

/** EBU R128 with true peak; framelog=verbose keeps the per-100 ms lines out of stderr, the summary prints at info. */
const WRITTEN_METER = 'ebur128=framelog=verbose:peak=true';

/**
 * Pass 2 when a pure gain would clip: gain, then a peak limiter run at 4× oversampling (192 kHz) so it
 * catches inter-sample (true) peaks, back to the source rate, and an ebur128 meter at the end whose
 * summary (integrated loudness, true peak) lets the pipeline check and correct the result.
 */
export function buildGainLimiterArgs(options: GainLimiterArgsInput): string[] {
  const audio = requireAudio(options.probe, 'buildGainLimiterArgs');
  const tp = options.truePeakDbtp ?? DEFAULT_TRUE_PEAK_DBTP;
  if (!Number.isFinite(options.gainDb) || Math.abs(options.gainDb) > 99)
    throw new RangeError(`gainDb out of range: ${options.gainDb}`);
  if (!Number.isFinite(tp) || tp < -9 || tp > 0) throw new RangeError(`truePeakDbtp must be from -9 to 0, got ${tp}`);
  const rate = outputSampleRate(audio.sampleRate, options.container);
  const limit = (10 ** (tp / 20)).toFixed(4);
  const filter = [
    `volume=${options.gainDb.toFixed(2)}dB`,
    'aresample=192000',
    // level=false: no make-up gain (the gain is ours); short attack/release keep the loudness cost small.
    `alimiter=limit=${limit}:attack=1:release=20:level=false`,
    `aresample=${rate}`,
    // The meter after the limiter; a pass that meters what it writes has it there instead.
    ...(metersWritten(options) ? [] : [WRITTEN_METER]),
  ].join(',');
  return audioPassTwoArgs(options, audio.index, filter, rate);
}

export interface PcmExtractArgsInput {
  input: string;
  probe: ProbeResult;
  rwTimeoutUs?: number;
}

/** 16 kHz mono signed 16-bit little-endian PCM on stdout: what the speech detector (src/media/vad.ts) reads. */
export function buildPcmExtractArgs(options: PcmExtractArgsInput): string[] {
  const audio = requireAudio(options.probe, 'buildPcmExtractArgs');
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    ...inputArgs(options.input, options.rwTimeoutUs),
    '-map',
    `0:${audio.index}`,
    '-ac',
    '1',
    '-ar',
    '16000',
    '-c:a',
    'pcm_s16le',
    '-f',
    's16le',
    'pipe:1',
  ];
}

function loudnessTargets(targets: LoudnessTargets): { i: number; tp: number } {
  const tp = targets.truePeakDbtp ?? DEFAULT_TRUE_PEAK_DBTP;
  if (!Number.isFinite(targets.targetLufs) || targets.targetLufs < -70 || targets.targetLufs > -5) {
    throw new RangeError(`targetLufs must be from -70 to -5, got ${targets.targetLufs}`);
  }
  if (!Number.isFinite(tp) || tp < -9 || tp > 0) throw new RangeError(`truePeakDbtp must be from -9 to 0, got ${tp}`);
  return { i: targets.targetLufs, tp };
}

function outputSampleRate(sourceRate: number, container: AudioOutputContainer): number {
  if (container === 'm4a' && !AAC_SAMPLE_RATES.has(sourceRate)) return 48000;
  return sourceRate;
}

function audioOutputCodecArgs(container: AudioOutputContainer): string[] {
  if (container === 'wav') return ['-c:a', 'pcm_s16le', '-f', 'wav'];
  // The ipod muxer is ffmpeg's M4A writer (brand "M4A ").
  return ['-c:a', 'aac', '-b:a', AUDIO_AAC_BITRATE, '-movflags', '+faststart', '-f', 'ipod'];
}

function requireAudio(probe: ProbeResult, caller: string): NonNullable<ProbeResult['audio']> {
  if (!probe.audio) throw new Error(`${caller}: the probe has no audio stream`);
  return probe.audio;
}
