// Where SDR light goes in the HDR picture: the transfer functions, the two mappings (`reference`:
// ITU-R BT.2408 placement; `expand`: ITU-R BT.2446-1 Method C's inverse tone curve) and the 3D LUT
// that carries `expand` into ffmpeg's lut3d. Pure functions, no I/O.
//
// Why Method C (Report ITU-R BT.2446-1 §6, eq. (5) and its inverse) and not Method A (§4.2): Method C's
// curve is linear in light below an inflection point and exponential above it, so with k1 = 100/203 the
// shadows and mid-tones are *exactly* the BT.2408 placement that `reference` uses, and only the range above
// the knee is expanded; k3 is free to reach any requested peak. Method A's published inverse is fixed at
// 1000 cd/m² and lifts the whole range (18 % grey ×1.8 at 1000 cd/m², ×4.9 if re-derived for 4000).
// The Report's own Method C parameters put the knee at 80 % SDR signal; squeezing a 1000–4000 cd/m²
// expansion into the top 44 codes gives steps of 8–13 PQ codes between adjacent 8-bit codes (contouring in
// skies and highlights), so the knee sits at 50 % signal (one stop above 18 % grey), where the largest step
// stays within the coarsest step the source already has under `reference` (see hdr-mapping.spec.ts).

/** ITU-R BT.2408 HDR reference white: SDR 100 % lands here in `reference` (cd/m²). */
export const REFERENCE_WHITE_NITS = 203;
/** The SDR display the source was graded on (BT.1886, black 0): 100 % signal = 100 cd/m². */
export const SDR_PEAK_NITS = 100;
/** BT.2100 HLG's reference display: the peak `expand` reaches for HLG, and the OOTF's nominal peak. */
export const HLG_DISPLAY_PEAK_NITS = 1000;
/** BT.2408 18 % grey card in an SDR signal: BT.709 OETF(0.18) = 40.9 % (8-bit code 106). */
export const SDR_GREY_18_SIGNAL = 1.099 * 0.18 ** 0.45 - 0.099;

export const MAPPINGS = ['reference', 'expand'] as const;
export type Mapping = (typeof MAPPINGS)[number];
export const TRANSFERS = ['pq', 'hlg'] as const;
export type Transfer = (typeof TRANSFERS)[number];

// --- transfer functions ---------------------------------------------------------------------------

const PQ_M1 = 2610 / 16384;
const PQ_M2 = 2523 / 32;
const PQ_C1 = 3424 / 4096;
const PQ_C2 = 2413 / 128;
const PQ_C3 = 2392 / 128;

/** SMPTE ST 2084 inverse EOTF: cd/m² → signal 0..1. */
export function pqEncode(nits: number): number {
  const y = (Math.min(Math.max(nits, 0), 10000) / 10000) ** PQ_M1;
  return ((PQ_C1 + PQ_C2 * y) / (1 + PQ_C3 * y)) ** PQ_M2;
}

/** SMPTE ST 2084 EOTF: signal 0..1 → cd/m². */
export function pqDecode(signal: number): number {
  const e = Math.min(Math.max(signal, 0), 1) ** (1 / PQ_M2);
  return 10000 * (Math.max(e - PQ_C1, 0) / (PQ_C2 - PQ_C3 * e)) ** (1 / PQ_M1);
}

const HLG_A = 0.17883277;
const HLG_B = 1 - 4 * HLG_A;
const HLG_C = 0.5 - HLG_A * Math.log(4 * HLG_A);
/** BT.2100 HLG system gamma at the 1000 cd/m² reference display. */
const HLG_GAMMA = 1.2;

/** BT.2100 HLG OETF: scene light 0..1 → signal 0..1. */
export function hlgOetf(scene: number): number {
  const e = Math.max(scene, 0);
  return e <= 1 / 12 ? Math.sqrt(3 * e) : HLG_A * Math.log(12 * e - HLG_B) + HLG_C;
}

/** BT.2100 HLG inverse OETF: signal 0..1 → scene light 0..1. */
export function hlgInverseOetf(signal: number): number {
  const e = Math.max(signal, 0);
  return e <= 0.5 ? (e * e) / 3 : (Math.exp((e - HLG_C) / HLG_A) + HLG_B) / 12;
}

/**
 * Display light (cd/m² per BT.2020 channel on the 1000 cd/m² reference display, black 0) → HLG signals:
 * the inverse of BT.2100's OOTF (driven by luminance, so hue is kept), then the OETF.
 */
export function hlgEncodeDisplayLight(rgb: Rgb): Rgb {
  const luminance = bt2020Luminance(rgb);
  if (luminance <= 0) return [0, 0, 0];
  const sceneLuminance = (luminance / HLG_DISPLAY_PEAK_NITS) ** (1 / HLG_GAMMA);
  const scale = 1 / (HLG_DISPLAY_PEAK_NITS * sceneLuminance ** (HLG_GAMMA - 1));
  return rgb.map((channel) => hlgOetf(channel * scale)) as Rgb;
}

/** HLG signals → display light on the 1000 cd/m² reference display (BT.2100 OOTF), cd/m² per channel. */
export function hlgDecodeDisplayLight(signals: Rgb): Rgb {
  return hlgSceneToDisplayLight(signals.map(hlgInverseOetf) as Rgb);
}

/** BT.2100's HLG OOTF: scene light (0..1 per channel, the inverse OETF's) → display light, cd/m² per channel. */
export function hlgSceneToDisplayLight(scene: Rgb): Rgb {
  const sceneLuminance = bt2020Luminance(scene);
  if (sceneLuminance <= 0) return [0, 0, 0];
  const gain = HLG_DISPLAY_PEAK_NITS * sceneLuminance ** (HLG_GAMMA - 1);
  return scene.map((channel) => channel * gain) as Rgb;
}

/** The source's display light relative to its white (0..1) from its signal: BT.1886 (γ 2.4, black 0), or sRGB. */
export function sdrDecode(signal: number, transfer: string | null): number {
  const v = Math.min(Math.max(signal, 0), 1);
  if (transfer === 'iec61966-2-1') return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  if (transfer === 'linear') return v;
  return v ** 2.4;
}

// --- colour ----------------------------------------------------------------------------------------

export type Rgb = [number, number, number];
export type Matrix = [Rgb, Rgb, Rgb];
type Chromaticities = { r: [number, number]; g: [number, number]; b: [number, number] };

const D65: [number, number] = [0.3127, 0.329];
/** The primaries we convert from (ffprobe's names); anything else is read as BT.709, as `reference` does. */
const PRIMARIES: Record<string, Chromaticities> = {
  bt709: { r: [0.64, 0.33], g: [0.3, 0.6], b: [0.15, 0.06] },
  smpte170m: { r: [0.63, 0.34], g: [0.31, 0.595], b: [0.155, 0.07] },
  smpte240m: { r: [0.63, 0.34], g: [0.31, 0.595], b: [0.155, 0.07] },
  bt470bg: { r: [0.64, 0.33], g: [0.29, 0.6], b: [0.15, 0.06] },
  bt2020: { r: [0.708, 0.292], g: [0.17, 0.797], b: [0.131, 0.046] },
};
/** BT.2020 luminance weights (also BT.2100's). */
const BT2020_Y: Rgb = [0.2627, 0.678, 0.0593];

export function bt2020Luminance(rgb: Rgb): number {
  return BT2020_Y[0] * rgb[0] + BT2020_Y[1] * rgb[1] + BT2020_Y[2] * rgb[2];
}

/** Linear RGB in the source's primaries → linear BT.2020 RGB (D65 both). */
export function toBt2020Matrix(primaries: string | null): Matrix {
  const source = PRIMARIES[primaries ?? ''] ?? PRIMARIES.bt709;
  return multiply(invert(rgbToXyz(PRIMARIES.bt2020)), rgbToXyz(source));
}

function rgbToXyz(p: Chromaticities): Matrix {
  const column = ([x, y]: [number, number]): Rgb => [x / y, 1, (1 - x - y) / y];
  const [r, g, b] = [column(p.r), column(p.g), column(p.b)];
  const primaries: Matrix = [
    [r[0], g[0], b[0]],
    [r[1], g[1], b[1]],
    [r[2], g[2], b[2]],
  ];
  const s = apply(invert(primaries), column(D65));
  return primaries.map((row) => [row[0] * s[0], row[1] * s[1], row[2] * s[2]]) as Matrix;
}

export function apply(m: Matrix, v: Rgb): Rgb {
  return m.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]) as Rgb;
}

function multiply(a: Matrix, b: Matrix): Matrix {
  return a.map((row) => [0, 1, 2].map((j) => row[0] * b[0][j] + row[1] * b[1][j] + row[2] * b[2][j])) as Matrix;
}

export function invert(m: Matrix): Matrix {
  const [[a, b, c], [d, e, f], [g, h, i]] = m;
  const det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  return [
    [(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
    [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
    [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det],
  ];
}

// --- BT.2446-1 Method C -------------------------------------------------------------------------------

/** The constants of Method C's tone curve (Report ITU-R BT.2446-1 §6.1.4), luminances in cd/m². */
export interface MethodCCurve {
  k1: number;
  k2: number;
  k3: number;
  k4: number;
  /** Inflection point on the SDR side (k1 · Y_HDR,ip). */
  sdrKnee: number;
  /** Inflection point on the HDR side (Y_HDR,ip). */
  hdrKnee: number;
}

/**
 * The Report's construction of k2 and k4 from k1, k3 and the SDR inflection point: the log segment meets
 * the linear one with the same value and slope there (C¹).
 */
export function methodCCurve(k1: number, k3: number, sdrKnee: number): MethodCCurve {
  const hdrKnee = sdrKnee / k1;
  const k2 = k1 * (1 - k3) * hdrKnee;
  const k4 = k1 * hdrKnee - k2 * Math.log(1 - k3);
  return { k1, k2, k3, k4, sdrKnee, hdrKnee };
}

/** The Report's eq. (5), HDR → SDR: Y_SDR = k1·Y_HDR below the knee, k2·ln(Y_HDR/Y_HDR,ip − k3) + k4 above. */
export function methodCToSdr(curve: MethodCCurve, hdrNits: number): number {
  if (hdrNits < curve.hdrKnee) return curve.k1 * hdrNits;
  return curve.k2 * Math.log(hdrNits / curve.hdrKnee - curve.k3) + curve.k4;
}

/** Its inverse, SDR → HDR: Y_SDR / k1 below the knee, Y_HDR,ip · (exp((Y_SDR − k4)/k2) + k3) above. */
export function methodCToHdr(curve: MethodCCurve, sdrNits: number): number {
  if (sdrNits < curve.sdrKnee) return sdrNits / curve.k1;
  return curve.hdrKnee * (Math.exp((sdrNits - curve.k4) / curve.k2) + curve.k3);
}

/** `expand`'s knee: 50 % SDR signal (BT.1886), one stop above the 18 % grey card. */
export const EXPAND_KNEE_SIGNAL = 0.5;

/**
 * `expand` toward `peakNits`: Method C with k1 = 100/203 (below the knee, exactly BT.2408's placement), the
 * knee at EXPAND_KNEE_SIGNAL, and k3 solved so that SDR 100 % white reaches the peak.
 */
export function expandCurve(peakNits: number): MethodCCurve {
  if (!(peakNits > REFERENCE_WHITE_NITS && peakNits <= 10000)) {
    throw new RangeError(`expand needs a peak above ${REFERENCE_WHITE_NITS} cd/m², got ${peakNits}`);
  }
  const k1 = SDR_PEAK_NITS / REFERENCE_WHITE_NITS;
  const sdrKnee = SDR_PEAK_NITS * EXPAND_KNEE_SIGNAL ** 2.4;
  // White's HDR light falls as 1 − k3 grows (k3 < 0 is allowed: a gentler curve for low peaks): bisect on
  // log(1 − k3).
  const whiteAt = (oneMinusK3: number) => methodCToHdr(methodCCurve(k1, 1 - oneMinusK3, sdrKnee), SDR_PEAK_NITS);
  let low = Math.log(1e-3);
  let high = Math.log(1e6);
  for (let i = 0; i < 200; i++) {
    const middle = (low + high) / 2;
    if (whiteAt(Math.exp(middle)) > peakNits) low = middle;
    else high = middle;
  }
  return methodCCurve(k1, 1 - Math.exp((low + high) / 2), sdrKnee);
}

// --- per mapping -------------------------------------------------------------------------------------

export interface MappingChoice {
  mapping: Mapping;
  transfer: Transfer;
  /** PQ only: the peak `expand` reaches (also the ST 2086 mastering peak). */
  peakNits: number;
}

/** The peak `expand` reaches: the requested one for PQ, the HLG reference display's for HLG. */
export function expandPeak(choice: MappingChoice): number {
  return choice.transfer === 'hlg' ? HLG_DISPLAY_PEAK_NITS : choice.peakNits;
}

/** HDR luminance (cd/m²) of a neutral SDR pixel at `signal` (0..1, BT.1886): the mapping's curve. */
export function neutralLight(choice: MappingChoice, signal: number): number {
  const sdrNits = SDR_PEAK_NITS * sdrDecode(signal, null);
  if (choice.mapping === 'reference') return (sdrNits * REFERENCE_WHITE_NITS) / SDR_PEAK_NITS;
  return methodCToHdr(expandCurve(expandPeak(choice)), sdrNits);
}

/**
 * One source colour through `expand`: source R'G'B' (0..1, full range) → linear BT.2020 light → Method C on
 * its luminance, chromaticity kept (every channel scaled alike, so hue and saturation stay) → PQ or HLG R'G'B'.
 * Every channel stays within 0..peak: the gain f(Y)/Y grows with Y and no channel exceeds 100 % before it.
 */
export function expandColour(
  source: Rgb,
  curve: MethodCCurve,
  toBt2020: Matrix,
  sourceTransfer: string | null,
  transfer: Transfer,
): Rgb {
  const linear = apply(toBt2020, source.map((v) => SDR_PEAK_NITS * sdrDecode(v, sourceTransfer)) as Rgb);
  const luminance = bt2020Luminance(linear);
  const gain = luminance > 0 ? methodCToHdr(curve, luminance) / luminance : 1 / curve.k1;
  const light = linear.map((channel) => Math.max(0, channel * gain)) as Rgb;
  return transfer === 'pq' ? (light.map(pqEncode) as Rgb) : hlgEncodeDisplayLight(light);
}

/** Lattice size of the expand LUT: ≤ 0.5 10-bit code of interpolation error on greys above 10 % signal. */
export const EXPAND_LUT_SIZE = 33;

export interface ExpandLutInput {
  choice: MappingChoice;
  sourcePrimaries: string | null;
  sourceTransfer: string | null;
  size?: number;
}

/**
 * The expand mapping as an Adobe/Resolve `.cube` 3D LUT for ffmpeg's lut3d: input the source's R'G'B'
 * (full range), output BT.2020 PQ or HLG R'G'B' (full range); red varies fastest, as the format says.
 */
export function buildExpandCube(input: ExpandLutInput): string {
  const size = input.size ?? EXPAND_LUT_SIZE;
  const curve = expandCurve(expandPeak(input.choice));
  const matrix = toBt2020Matrix(input.sourcePrimaries);
  const lines = [`TITLE "mediajobs expand: BT.2446-1 Method C to ${input.choice.transfer}"`, `LUT_3D_SIZE ${size}`];
  for (let b = 0; b < size; b++) {
    for (let g = 0; g < size; g++) {
      for (let r = 0; r < size; r++) {
        const source: Rgb = [r / (size - 1), g / (size - 1), b / (size - 1)];
        const out = expandColour(source, curve, matrix, input.sourceTransfer, input.choice.transfer);
        lines.push(out.map((value) => value.toFixed(6)).join(' '));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
