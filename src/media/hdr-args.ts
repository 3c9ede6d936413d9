// The SDR → HDR10/HLG video argv: the zscale (or LUT) colour step, x265 with its HDR signalling, the
// audio kept or re-encoded to AAC. Pure, no I/O: each builder returns the exact argument list the
// pipeline spawns, so the unit tests pin the commands against frozen probe fixtures.
import { isAbsolute } from 'node:path';
import { X265_PRESETS, type X265Preset } from './encoder-settings';
import { AUDIO_AAC_BITRATE, commonHead, inputArgs, outputPath } from './ffmpeg-input';
import { REFERENCE_WHITE_NITS, usesMappingLut, type Mapping, type Transfer } from './hdr-mapping';
import type { ProbeResult, VideoOutputContainer, VideoStreamInfo } from './media.types';
import { outputSize } from './output-geometry';

/**
 * Brightest light `reference` can emit: super-whites (8-bit Y=254, 10-bit Y=1019) go through the BT.1886
 * curve to ≈ 248–249 cd/m² (measured: Y=254 → PQ code 591 = 247.7 cd/m²). Only the encoder's first word on
 * MaxCLL: the pipeline measures the picture and rewrites it (light-levels.ts).
 */
export const SDR_DERIVED_MAX_CLL_NITS = 249;

// Display P3 primaries with a D65 white point, in the 0.00002 units of SMPTE ST 2086 / x265.
const MASTER_DISPLAY_P3_D65 = 'G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)';
// Mastering display black: 0.0001 cd/m² (x265 takes L in 0.0001 cd/m² units).
const MASTER_DISPLAY_MIN_LUMINANCE = 1;

export interface SdrToHdrArgsInput {
  /** Absolute path, or an http(s) URL (then read with a network timeout). */
  input: string;
  output: string;
  probe: ProbeResult;
  /**
   * Requested lines (720, 1080, 2160) of the picture's short side, so 720p means 1280×720 for landscape and
   * 720×1280 for portrait. Only ever shrinks: a smaller source keeps its size; null or omitted keeps it too.
   */
  targetHeight?: number | null;
  /** Mastering display peak in cd/m² (ST 2086 max luminance; `expand`'s target with PQ). Ignored for HLG. */
  peakNits: number;
  /** Where SDR light goes (hdr-mapping.ts). */
  mapping: Mapping;
  /** PQ (HDR10) or HLG. */
  transfer: Transfer;
  /** `expand` only: the `.cube` LUT (buildExpandCube) the pipeline wrote for this source. */
  lutPath?: string;
  container: VideoOutputContainer;
  preset: X265Preset;
  crf: number;
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
  const { peakNits, transfer, mapping, preset, crf } = options;
  assertPeakNits(peakNits);
  assertPreset(preset);
  assertCrf(crf);

  return [
    ...commonHead('error'),
    ...inputArgs(options.input, options.rwTimeoutUs),
    '-map',
    `0:${video.index}`,
    ...(probe.audio ? ['-map', `0:${probe.audio.index}`] : []),
    // The LUT chain's slice-threaded filters (lut3d, maskedthreshold) spent ~10 % more CPU handing slices
    // to threads than on one thread, while x265 already keeps every core busy (docs/performance.md); the
    // picture is the same. `reference` with PQ (one zscale, not slice-threaded) keeps ffmpeg's default.
    ...(usesMappingLut({ mapping, transfer }) ? ['-filter_threads', '1'] : []),
    '-vf',
    buildHdrFilter(video, options.targetHeight, {
      mapping,
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
    buildX265Params({ transfer, peakNits, mapping }, options.confinedCpus),
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
 * `reference` with PQ: one zscale step, input colorimetry from the probe (BT.709/limited when untagged), out to
 * BT.2020 PQ with SDR white at 203 cd/m².
 * `expand`, and `reference` with HLG: zscale to the source's float R'G'B' (matrix and size only; float keeps
 * super-whites above 1.0, which 16-bit integers clip), the mapping LUT (tetrahedral, its DOMAIN_MAX above 1),
 * zscale to BT.2020 Y'CbCr (matrix only): the LUT holds the whole colour conversion; `expand` then smooths
 * the luma's steps (expandSmoothing). HLG goes through the LUT
 * because zimg applies HLG's OOTF per channel, not on luminance as BT.2100 says (hue shifts up to Δu'v' 0.035).
 */
export function buildHdrFilter(
  video: VideoStreamInfo,
  targetHeight: number | null | undefined,
  choice: HdrFilterChoice,
): string {
  const size = outputSize(video, targetHeight);
  const resize = size.width !== video.width || size.height !== video.height;
  const sizeParts = resize ? [`w=${size.width}`, `h=${size.height}`] : [];
  const { tin, pin, min, rin } = zscaleColour(video);
  const t = TRANSFER_TAGS[choice.transfer];
  if (!usesMappingLut(choice)) {
    const parts = [...sizeParts, `tin=${tin}`, `pin=${pin}`, `min=${min}`, `rin=${rin}`];
    parts.push(`t=${t}`, 'p=bt2020', 'm=bt2020nc', 'r=tv', `npl=${REFERENCE_WHITE_NITS}`);
    return `zscale=${parts.join(':')},format=yuv420p10le`;
  }
  if (!choice.lutPath) throw new Error('buildHdrFilter: this mapping needs the path of its LUT');
  // Same transfer and primaries in and out: zscale converts only the matrix (and the size).
  const toRgb = [...sizeParts, `tin=${tin}`, `t=${tin}`, `pin=${pin}`, `p=${pin}`, `min=${min}`, 'm=gbr'];
  const toYuv = [`tin=${t}`, `t=${t}`, 'pin=bt2020', 'p=bt2020', 'min=gbr', 'm=bt2020nc', 'rin=pc', 'r=tv'];
  return [
    `zscale=${[...toRgb, `rin=${rin}`, 'r=pc'].join(':')}`,
    'format=gbrpf32le',
    `lut3d=file=${filterPath(choice.lutPath)}:interp=tetrahedral`,
    `zscale=${toYuv.join(':')}`,
    'format=yuv420p10le',
    ...(choice.mapping === 'expand' ? [expandSmoothing(size.width, size.height)] : []),
  ].join(',');
}

/**
 * `expand` stretches the highlights: adjacent 8-bit source codes land 4–8 10-bit codes apart there (the curve
 * must fit 1000–4000 cd/m² between pale skin and white), so a smooth sky made of 8-bit steps shows contours.
 * The smoothing rebuilds the gradient between the steps on the 10-bit luma: a blurred copy (the picture
 * area-averaged down by EXPAND_SMOOTH_FACTOR and drawn back up bilinearly — swscale's SIMD, ~16 px across)
 * replaces each pixel it stays within EXPAND_SMOOTH_THRESHOLD codes of (maskedthreshold), so the staircase
 * becomes the ramp it stood for, while edges and texture steeper than that keep their pixels. Deterministic
 * (no noise for x265 to spend bits on) and about a quarter of the CPU of ffmpeg's `deband` (plain C, random
 * neighbours), which it replaced for issue 40's cost target (docs/media.md). Its pad labels may repeat in one
 * graph (the ladder's rungs): ffmpeg links each label to the next use after it, inside the same chain.
 */
export const EXPAND_SMOOTH_THRESHOLD = 8;
export const EXPAND_SMOOTH_FACTOR = 8;

export function expandSmoothing(width: number, height: number): string {
  // Even sides for 4:2:0, at least 2.
  const small = (side: number) => Math.max(2, 2 * Math.round(side / (2 * EXPAND_SMOOTH_FACTOR)));
  const [sharp, copy, smooth] = ['[sharp]', '[copy]', '[smooth]'];
  return (
    `split${sharp}${copy};` +
    `${copy}scale=w=${small(width)}:h=${small(height)}:flags=area,scale=w=${width}:h=${height}:flags=bilinear${smooth};` +
    `${smooth}${sharp}maskedthreshold=threshold=${EXPAND_SMOOTH_THRESHOLD}:planes=1`
  );
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
    // No settings string in the stream (x265's "user data unregistered" SEI): it would carry the first
    // max-cll bound after the pipeline has written the measured one, and every place in the file must agree.
    'info=0',
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
