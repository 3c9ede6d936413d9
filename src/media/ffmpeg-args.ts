// Pure argv builders for ffprobe/ffmpeg: no I/O, no shell. Each returns the exact argument list the
// pipelines spawn, so the unit tests can pin the commands against frozen probe fixtures.
import { isAbsolute } from 'node:path';
import { REFERENCE_WHITE_NITS, type Mapping, type Transfer } from './hdr-mapping';
import type { AudioOutputContainer, ProbeResult, VideoOutputContainer, VideoStreamInfo } from './media.types';

export { REFERENCE_WHITE_NITS };

/** The demuxers any of our tools may run on user input (the mov demuxer covers MP4/MOV/M4A). */
export const ALLOWED_DEMUXERS = 'mov,wav';
/** Network read timeout for URL inputs (µs): a stalled source fails instead of hanging the job. */
export const DEFAULT_RW_TIMEOUT_US = 15_000_000;

// --- SDR → HDR10 -----------------------------------------------------------------------------------

/**
 * Brightest light `reference` can emit: super-whites (8-bit Y=254, 10-bit Y=1019) go through the BT.1886
 * curve to ≈ 248–249 cd/m² (measured: Y=254 → PQ code 591 = 247.7 cd/m²). Only the encoder's first word on
 * MaxCLL: the pipeline measures the picture and rewrites it (light-levels.ts).
 */
export const SDR_DERIVED_MAX_CLL_NITS = 249;
export const DEFAULT_PEAK_NITS = 1000;

export const X265_PRESETS = [
  'ultrafast',
  'superfast',
  'veryfast',
  'faster',
  'fast',
  'medium',
  'slow',
  'slower',
  'veryslow',
  'placebo',
] as const;
export type X265Preset = (typeof X265_PRESETS)[number];

/**
 * Default encoder setting. Round-trip fidelity (PQ output → BT.709 with zscale npl=203 → luma SSIM
 * against the source; method in test/media/sdr2hdr-quality.spec.ts), testsrc2 tagged bt709, measured here:
 *   1920×1080 10 s:  veryfast CRF 12 → 0.952 (20 s encode on an idle 2-core box, 13.7 MB) | veryfast 16 → 0.944
 *                    | medium 16 → 0.963 (37 s, 7.6 MB)
 *   640×360 10 s:    colour step alone (no encode) → 0.959 — the ceiling, set by 4:2:0 chroma resampling
 *                    leaking into luma at testsrc2's saturated edges (4:4:4 gives 0.994); ultrafast 16 → 0.854,
 *                    veryfast 16 → 0.913, veryfast 12 → 0.935, medium 16 → 0.929, veryfast 4 → 0.951.
 *                    Against the colour-step-only round trip (the encoder's own loss): veryfast 12 → 0.957,
 *                    veryfast 16 → 0.936, medium 16 → 0.953, ultrafast 16 → 0.874.
 *   640×360 2 s (the quality test's fixture): veryfast 12 → 0.937 end to end, 0.954 encoder only.
 * docs/media.md's higher figures (colour step 0.981) did not reproduce with this method. veryfast CRF 12 is the
 * fastest setting found that keeps ≥ 0.95 at 1080p end to end and for the encoder alone at 360p.
 * Customers who want smaller files or faster jobs trade quality explicitly via preset/crf.
 */
export const DEFAULT_X265_PRESET: X265Preset = 'veryfast';
export const DEFAULT_X265_CRF = 12;

// Display P3 primaries with a D65 white point, in the 0.00002 units of SMPTE ST 2086 / x265.
const MASTER_DISPLAY_P3_D65 = 'G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)';
// Mastering display black: 0.0001 cd/m² (x265 takes L in 0.0001 cd/m² units).
const MASTER_DISPLAY_MIN_LUMINANCE = 1;
const AUDIO_AAC_BITRATE = '192k';

export interface SdrToHdrArgsInput {
  /** Absolute path, or an http(s) URL (then read with a network timeout). */
  input: string;
  output: string;
  probe: ProbeResult;
  /**
   * Requested lines (720, 1080, 2160) of the picture's short side, so 720p means 1280×720 for landscape and
   * 720×1280 for portrait. Only ever shrinks: a smaller source keeps its size.
   */
  targetHeight?: number;
  /** Mastering display peak in cd/m² (ST 2086 max luminance; `expand`'s target with PQ). Ignored for HLG. */
  peakNits?: number;
  /** Where SDR light goes (hdr-mapping.ts); `reference` when omitted. */
  mapping?: Mapping;
  /** PQ (HDR10) or HLG; `pq` when omitted. */
  transfer?: Transfer;
  /** `expand` only: the `.cube` LUT (buildExpandCube) the pipeline wrote for this source. */
  lutPath?: string;
  container: VideoOutputContainer;
  preset?: X265Preset;
  crf?: number;
  rwTimeoutUs?: number;
  /**
   * The CPUs the encode must stay within, when the worker is confined to fewer than the machine has
   * (confinedCpuCount); undefined lets x265 use the machine.
   */
  confinedCpus?: number;
}

/** The stream's transfer tag per output transfer (ffmpeg's and x265's names). */
export const TRANSFER_TAGS: Record<Transfer, 'smpte2084' | 'arib-std-b67'> = {
  pq: 'smpte2084',
  hlg: 'arib-std-b67',
};

export function buildSdrToHdrArgs(options: SdrToHdrArgsInput): string[] {
  const { probe, container } = options;
  const video = probe.video;
  if (!video) throw new Error('buildSdrToHdrArgs: the probe has no video stream');
  const peakNits = options.peakNits ?? DEFAULT_PEAK_NITS;
  const transfer = options.transfer ?? 'pq';
  const preset = options.preset ?? DEFAULT_X265_PRESET;
  const crf = options.crf ?? DEFAULT_X265_CRF;
  assertPeakNits(peakNits);
  assertPreset(preset);
  assertCrf(crf);

  return [
    ...commonHead('error'),
    ...inputArgs(options.input, options.rwTimeoutUs),
    '-map',
    `0:${video.index}`,
    ...(probe.audio ? ['-map', `0:${probe.audio.index}`] : []),
    '-vf',
    buildHdrFilter(video, options.targetHeight, {
      mapping: options.mapping ?? 'reference',
      transfer,
      lutPath: options.lutPath,
    }),
    '-c:v',
    'libx265',
    '-preset',
    preset,
    '-crf',
    String(crf),
    '-profile:v',
    'main10',
    '-pix_fmt',
    'yuv420p10le',
    '-tag:v',
    'hvc1',
    '-color_primaries',
    'bt2020',
    '-color_trc',
    TRANSFER_TAGS[transfer],
    '-colorspace',
    'bt2020nc',
    '-color_range',
    'tv',
    '-x265-params',
    buildX265Params({ transfer, peakNits, mapping: options.mapping ?? 'reference' }, options.confinedCpus),
    ...hdrAudioArgs(probe),
    '-movflags',
    '+faststart',
    '-f',
    container,
    outputPath(options.output),
  ];
}

export interface HdrFilterChoice {
  mapping: Mapping;
  transfer: Transfer;
  lutPath?: string;
}

/**
 * `reference`: one zscale step, input colorimetry from the probe (BT.709/limited when untagged), out to
 * BT.2020 PQ or HLG with SDR white at 203 cd/m² (HLG: 75 % signal, zimg's OOTF at 1000 cd/m²).
 * `expand`: zscale to the source's R'G'B' (matrix and size only), the expand LUT (tetrahedral), zscale to
 * BT.2020 Y'CbCr (matrix only): the LUT holds the whole colour conversion.
 */
export function buildHdrFilter(
  video: VideoStreamInfo,
  targetHeight?: number,
  choice: HdrFilterChoice = { mapping: 'reference', transfer: 'pq' },
): string {
  const size = outputSize(video, targetHeight);
  const resize = size.width !== video.width || size.height !== video.height;
  const sizeParts = resize ? [`w=${size.width}`, `h=${size.height}`] : [];
  const { tin, pin, min, rin } = zscaleColour(video);
  const t = TRANSFER_TAGS[choice.transfer];
  if (choice.mapping === 'reference') {
    const parts = [...sizeParts, `tin=${tin}`, `pin=${pin}`, `min=${min}`, `rin=${rin}`];
    parts.push(`t=${t}`, 'p=bt2020', 'm=bt2020nc', 'r=tv', `npl=${REFERENCE_WHITE_NITS}`);
    return `zscale=${parts.join(':')},format=yuv420p10le`;
  }
  if (!choice.lutPath) throw new Error('buildHdrFilter: expand needs the path of its LUT');
  // Same transfer and primaries in and out: zscale converts only the matrix (and the size).
  const toRgb = [...sizeParts, `tin=${tin}`, `t=${tin}`, `pin=${pin}`, `p=${pin}`, `min=${min}`, 'm=gbr'];
  const toYuv = [`tin=${t}`, `t=${t}`, 'pin=bt2020', 'p=bt2020', 'min=gbr', 'm=bt2020nc', 'rin=pc', 'r=tv'];
  return [
    `zscale=${[...toRgb, `rin=${rin}`, 'r=pc'].join(':')}`,
    'format=gbrp16le',
    `lut3d=file=${filterPath(choice.lutPath)}:interp=tetrahedral`,
    `zscale=${toYuv.join(':')}`,
    'format=yuv420p10le',
  ].join(',');
}

/** The light levels x265 writes first: bounds from the curve, replaced by the measured ones (light-levels.ts). */
export function placeholderLightLevels(mapping: Mapping, peakNits: number): { maxCll: number; maxFall: number } {
  if (mapping === 'expand') return { maxCll: peakNits, maxFall: peakNits };
  const maxCll = Math.min(SDR_DERIVED_MAX_CLL_NITS, peakNits);
  return { maxCll, maxFall: Math.min(REFERENCE_WHITE_NITS, maxCll) };
}

export function buildX265Params(
  choice: { transfer: Transfer; peakNits: number; mapping: Mapping },
  confinedCpus?: number,
): string {
  if (confinedCpus !== undefined && !(Number.isInteger(confinedCpus) && confinedCpus >= 1)) {
    throw new RangeError(`confinedCpus must be a positive integer, got ${confinedCpus}`);
  }
  const light = placeholderLightLevels(choice.mapping, choice.peakNits);
  // HLG is scene-referred: no mastering display, no light levels, no PQ-tuned QP offsets (hdr10-opt).
  const signalling =
    choice.transfer === 'pq'
      ? [
          'hdr10=1',
          'hdr10-opt=1',
          'repeat-headers=1',
          'colorprim=bt2020',
          'transfer=smpte2084',
          'colormatrix=bt2020nc',
          'range=limited',
          `master-display=${MASTER_DISPLAY_P3_D65}L(${choice.peakNits * 10000},${MASTER_DISPLAY_MIN_LUMINANCE})`,
          `max-cll=${light.maxCll},${light.maxFall}`,
        ]
      : ['repeat-headers=1', 'colorprim=bt2020', 'transfer=arib-std-b67', 'colormatrix=bt2020nc', 'range=limited'];
  return [
    ...signalling,
    // x265 logs its banner and stats to stderr at info level; keep stderr for real problems.
    'log-level=error',
    // A confined worker: no NUMA thread pools (x265 pins their threads to the whole node, escaping the
    // confinement — see cpu-set.ts), so its threads keep the process's CPUs; frame parallelism only,
    // one frame in flight per CPU (x265 allows at most 16).
    ...(confinedCpus === undefined ? [] : ['pools=none', `frame-threads=${Math.min(confinedCpus, 16)}`]),
  ].join(':');
}

/** The ST 2086 mastering display of our HDR10 outputs: Display P3 primaries, D65, 0.0001 cd/m² to the peak. */
export const MASTER_DISPLAY = {
  /** x, y of G, B, R (SEI order) and the white point, in 0.00002 units. */
  primaries: [13250, 34500, 7500, 3000, 34000, 16000] as const,
  whitePoint: [15635, 16450] as const,
  /** 0.0001 cd/m² units. */
  minLuminance: MASTER_DISPLAY_MIN_LUMINANCE,
};

// A filtergraph option value is parsed twice (graph, then option); our own work paths never need quoting.
export function filterPath(path: string): string {
  if (!isAbsolute(path) || !/^[A-Za-z0-9_./+-]+$/.test(path)) {
    throw new Error(`LUT path must be absolute and plain (letters, digits, _ . / + -): ${path}`);
  }
  return path;
}

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

function hdrAudioArgs(probe: ProbeResult): string[] {
  return probe.audio ? hdrAudioCodecArgs(probe.audio.codec) : ['-an'];
}

/** The codec options of an sdr2hdr output's audio (also the segment join's). */
export function hdrAudioCodecArgs(codec: string): string[] {
  // AAC is valid in both MP4 and MOV, so it is kept bit-exact; anything else is re-encoded to AAC.
  if (codec === 'aac') return ['-c:a', 'copy'];
  return ['-c:a', 'aac', '-b:a', AUDIO_AAC_BITRATE];
}

// zscale's names equal ffprobe's for these values; anything else (unknown, unspecified, or a value
// zscale cannot read) falls back to BT.709 — zscale fails with "no path between colorspaces" without one.
const ZSCALE_TRANSFERS = new Set([
  'bt709',
  'bt470m',
  'bt470bg',
  'smpte170m',
  'linear',
  'bt2020-10',
  'bt2020-12',
  'smpte2084',
  'iec61966-2-1',
  'iec61966-2-4',
  'arib-std-b67',
]);
const ZSCALE_PRIMARIES = new Set([
  'bt709',
  'bt470m',
  'bt470bg',
  'smpte170m',
  'smpte240m',
  'film',
  'bt2020',
  'smpte428',
  'smpte431',
  'smpte432',
  'jedec-p22',
]);
const ZSCALE_MATRICES = new Set(['bt709', 'fcc', 'bt470bg', 'smpte170m', 'ycgco', 'bt2020nc', 'bt2020c', 'gbr']);
const ZSCALE_RANGES = new Set(['tv', 'pc']);

/** The source's colorimetry in zscale's words (BT.709/limited when untagged): the HDR filter's input, the round trip's output. */
export function zscaleColour(
  video: Pick<VideoStreamInfo, 'colorTransfer' | 'colorPrimaries' | 'colorSpace' | 'colorRange'>,
) {
  return {
    tin: zscaleValue(video.colorTransfer, ZSCALE_TRANSFERS, 'bt709'),
    pin: zscaleValue(video.colorPrimaries, ZSCALE_PRIMARIES, 'bt709'),
    min: zscaleValue(video.colorSpace, ZSCALE_MATRICES, 'bt709'),
    rin: zscaleValue(video.colorRange, ZSCALE_RANGES, 'tv'),
  };
}

function zscaleValue(tag: string | null, known: Set<string>, fallback: string): string {
  return tag !== null && known.has(tag) ? tag : fallback;
}

function evenRound(value: number): number {
  return Math.max(2, Math.round(value / 2) * 2);
}

function assertPeakNits(peakNits: number): void {
  // Below the 203-nit reference white the "HDR" picture would be dimmer than its own white.
  if (!Number.isInteger(peakNits) || peakNits < REFERENCE_WHITE_NITS || peakNits > 10000) {
    throw new RangeError(`peakNits must be an integer from ${REFERENCE_WHITE_NITS} to 10000, got ${peakNits}`);
  }
}

function assertPreset(preset: string): void {
  if (!(X265_PRESETS as readonly string[]).includes(preset)) throw new RangeError(`unknown x265 preset ${preset}`);
}

function assertCrf(crf: number): void {
  if (!Number.isFinite(crf) || crf < 0 || crf > 51) throw new RangeError(`crf must be from 0 to 51, got ${crf}`);
}

// --- Audio: loudness (EBU R128 two-pass) and PCM for the VAD ----------------------------------------

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

/** Pass 1: loudnorm measures the whole input and prints its JSON report (at info level, on stderr). */
export function buildLoudnessMeasureArgs(options: LoudnessMeasureArgsInput): string[] {
  const audio = requireAudio(options.probe, 'buildLoudnessMeasureArgs');
  const targets = loudnessTargets(options);
  const filter = `loudnorm=I=${targets.i}:TP=${targets.tp}:LRA=${DEFAULT_LRA}:print_format=json`;
  return [
    ...commonHead('info'),
    ...inputArgs(options.input, options.rwTimeoutUs),
    '-map',
    `0:${audio.index}`,
    '-af',
    filter,
    '-f',
    'null',
    '-',
  ];
}

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

// --- ffprobe ---------------------------------------------------------------------------------------

/** Packets read to look for CENC "Encryption info" side data (a few per stream is plenty). */
export const PROBE_PACKETS = 16;

export function buildProbeArgs(input: string, rwTimeoutUs?: number): string[] {
  return [
    '-v',
    'error',
    ...inputOptions(input, rwTimeoutUs),
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    // The first packets carry "Encryption info" side data when a track is CENC-encrypted; this works
    // for URLs too, where the box scan of a local file is not possible.
    '-show_packets',
    '-read_intervals',
    `%+#${PROBE_PACKETS}`,
    '-show_entries',
    'packet=stream_index:packet_side_data=side_data_type',
    input,
  ];
}

// --- shared pieces -----------------------------------------------------------------------------------

export function isNetworkInput(input: string): boolean {
  return /^https?:\/\//i.test(input);
}

function commonHead(logLevel: 'error' | 'info'): string[] {
  return ['-hide_banner', '-nostdin', '-loglevel', logLevel, '-y', '-progress', 'pipe:1', '-nostats'];
}

function inputArgs(input: string, rwTimeoutUs?: number): string[] {
  return [...inputOptions(input, rwTimeoutUs), '-i', input];
}

// Only the demuxers we accept ever parse user input, and a file can never make the tool open
// another file or URL (HLS/concat playlists, dref): a local input may read local files only.
export function inputOptions(input: string, rwTimeoutUs = DEFAULT_RW_TIMEOUT_US): string[] {
  if (isNetworkInput(input)) {
    return [
      '-protocol_whitelist',
      'http,https,tcp,tls',
      '-rw_timeout',
      String(rwTimeoutUs),
      '-format_whitelist',
      ALLOWED_DEMUXERS,
    ];
  }
  if (!isAbsolute(input)) throw new Error(`media input must be an absolute path or an http(s) URL: ${input}`);
  return ['-protocol_whitelist', 'file', '-format_whitelist', ALLOWED_DEMUXERS];
}

function outputPath(output: string): string {
  // A relative name could be read as a protocol ("x:y") or an option; the worker always has absolute paths.
  if (!isAbsolute(output)) throw new Error(`media output must be an absolute path: ${output}`);
  return output;
}
