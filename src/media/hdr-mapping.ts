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

/**
 * The source's display light relative to its white from its signal: BT.1886 (γ 2.4, black 0), or sRGB. Above 1
 * (super-whites) the curve goes on, so their detail reaches the mapping.
 */
export function sdrDecode(signal: number, transfer: string | null): number {
  const v = Math.max(signal, 0);
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

/** `expand`'s lowest knee: 50 % SDR signal (BT.1886), one stop above the 18 % grey card. */
export const EXPAND_KNEE_SIGNAL = 0.5;
/** Pale skin: the brightest face tone `expand` keeps near its `reference` light (80 % SDR signal, BT.1886). */
export const PALE_SKIN_SIGNAL = 0.8;
/** Diffuse (100 %) SDR white lands at this share of the peak; the super-whites above it share the rest. */
export const EXPAND_WHITE_SHARE = 0.82;
/**
 * The SDR signal that reaches the peak: 8-bit code 255 ((255 − 16) / 219). Super-whites 236…254 keep distinct,
 * increasing light between diffuse white and the peak; nothing a source can carry lands above it.
 */
export const EXPAND_TOP_SIGNAL = (255 - 16) / 219;

/**
 * How much brighter than under `reference` pale skin may be at `peakNits`: ×1.45 up to 1000 cd/m², ×1.95 from
 * 4000 (log-interpolated between) — inside issue 40's ×1.5 and ×2, so faces stay faces and the expansion goes
 * to highlights.
 */
export function paleSkinGain(peakNits: number): number {
  const t = Math.min(Math.max(Math.log(peakNits / 1000) / Math.log(4), 0), 1);
  return 1.45 + 0.5 * t;
}

/**
 * `expand` toward a peak, in three pieces of SDR display light x (cd/m² on the 100 cd/m² SDR display, above 100
 * for super-whites): BT.2408's placement (×2.03) below the knee; Method C's exponential from the knee to diffuse
 * white, which it brings to EXPAND_WHITE_SHARE of the peak; and a geometric shoulder from white to the peak at
 * EXPAND_TOP_SIGNAL, so super-whites keep their detail.
 */
export interface ExpandCurve {
  peakNits: number;
  /** HDR light of SDR 100 % white. */
  whiteNits: number;
  /** SDR light (cd/m²) of EXPAND_TOP_SIGNAL, which reaches the peak. */
  topSdrNits: number;
  /** The exponential between the knee and white. */
  methodC: MethodCCurve;
}

/** SDR light (cd/m², may exceed 100 for super-whites) → HDR light (cd/m²) on `curve`. */
export function expandToHdr(curve: ExpandCurve, sdrNits: number): number {
  if (sdrNits <= SDR_PEAK_NITS) return methodCToHdr(curve.methodC, sdrNits);
  const t = Math.min((sdrNits - SDR_PEAK_NITS) / (curve.topSdrNits - SDR_PEAK_NITS), 1);
  return curve.whiteNits * (curve.peakNits / curve.whiteNits) ** t;
}

/** The inverse: HDR light → SDR light. */
export function expandToSdr(curve: ExpandCurve, hdrNits: number): number {
  if (hdrNits <= curve.whiteNits) return methodCToSdr(curve.methodC, hdrNits);
  const t = Math.log(Math.min(hdrNits, curve.peakNits) / curve.whiteNits) / Math.log(curve.peakNits / curve.whiteNits);
  return SDR_PEAK_NITS + t * (curve.topSdrNits - SDR_PEAK_NITS);
}

/** Method C from `sdrKnee` (SDR cd/m²) with k3 solved so that SDR white reaches `whiteNits`. */
function methodCToWhite(sdrKnee: number, whiteNits: number): MethodCCurve {
  const k1 = SDR_PEAK_NITS / REFERENCE_WHITE_NITS;
  // White's HDR light falls as 1 − k3 grows (k3 < 0 is allowed: a gentler curve for low peaks): bisect on
  // log(1 − k3).
  const whiteAt = (oneMinusK3: number) => methodCToHdr(methodCCurve(k1, 1 - oneMinusK3, sdrKnee), SDR_PEAK_NITS);
  let low = Math.log(1e-3);
  let high = Math.log(1e6);
  for (let i = 0; i < 200; i++) {
    const middle = (low + high) / 2;
    if (whiteAt(Math.exp(middle)) > whiteNits) low = middle;
    else high = middle;
  }
  return methodCCurve(k1, 1 - Math.exp((low + high) / 2), sdrKnee);
}

/**
 * `expand` toward `peakNits`: white at EXPAND_WHITE_SHARE of the peak (at least halfway between 203 and the
 * peak), and the knee as low as EXPAND_KNEE_SIGNAL allows while pale skin stays within paleSkinGain of its
 * `reference` light — the higher the peak, the higher the knee.
 */
export function expandCurve(peakNits: number): ExpandCurve {
  if (!(peakNits > REFERENCE_WHITE_NITS && peakNits <= 10000)) {
    throw new RangeError(`expand needs a peak above ${REFERENCE_WHITE_NITS} cd/m², got ${peakNits}`);
  }
  const whiteNits = Math.max(EXPAND_WHITE_SHARE * peakNits, (REFERENCE_WHITE_NITS + peakNits) / 2);
  const skinSdr = SDR_PEAK_NITS * PALE_SKIN_SIGNAL ** 2.4;
  const skinLimit = (paleSkinGain(peakNits) * (skinSdr * REFERENCE_WHITE_NITS)) / SDR_PEAK_NITS;
  const skinAt = (sdrKnee: number) => methodCToHdr(methodCToWhite(sdrKnee, whiteNits), skinSdr);
  // Pale skin's light falls as the knee rises; the knee stays below the skin itself (where the gain is 1).
  let low = SDR_PEAK_NITS * EXPAND_KNEE_SIGNAL ** 2.4;
  let high = skinSdr;
  if (skinAt(low) > skinLimit) {
    for (let i = 0; i < 100; i++) {
      const middle = (low + high) / 2;
      if (skinAt(middle) > skinLimit) low = middle;
      else high = middle;
    }
    low = high;
  }
  return {
    peakNits,
    whiteNits,
    topSdrNits: SDR_PEAK_NITS * EXPAND_TOP_SIGNAL ** 2.4,
    methodC: methodCToWhite(low, whiteNits),
  };
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

/** A mapping's curve on luminance: SDR display light (cd/m², 100 = white) → HDR display light (cd/m²). */
export type LightCurve = (sdrNits: number) => number;

/** `reference` (BT.2408: ×2.03, super-whites on the same line) or `expand`'s curve toward its peak. */
export function lightCurve(choice: MappingChoice): LightCurve {
  if (choice.mapping === 'reference') return (sdrNits) => (sdrNits * REFERENCE_WHITE_NITS) / SDR_PEAK_NITS;
  const curve = expandCurve(expandPeak(choice));
  return (sdrNits) => expandToHdr(curve, sdrNits);
}

/** HDR luminance (cd/m²) of a neutral SDR pixel at `signal` (0..1, above 1 for super-whites; BT.1886). */
export function neutralLight(choice: MappingChoice, signal: number): number {
  return lightCurve(choice)(SDR_PEAK_NITS * sdrDecode(signal, null));
}

/**
 * One source colour through a mapping: source R'G'B' (full range, super-whites above 1) → linear BT.2020 light
 * → the curve on its luminance, chromaticity kept (every channel scaled alike, so hue and saturation stay) →
 * PQ or HLG R'G'B' (HLG through BT.2100's luminance-based OOTF, so a BT.2100 display shows the source's
 * chromaticity). No channel leaves 0…peak: the light is limited before the encode.
 */
export function mapColour(
  source: Rgb,
  curve: LightCurve,
  peakNits: number,
  toBt2020: Matrix,
  sourceTransfer: string | null,
  transfer: Transfer,
): Rgb {
  const linear = apply(toBt2020, source.map((v) => SDR_PEAK_NITS * sdrDecode(v, sourceTransfer)) as Rgb);
  const luminance = bt2020Luminance(linear);
  const gain = luminance > 0 ? curve(luminance) / luminance : curve(1e-6) / 1e-6;
  const light = linear.map((channel) => Math.min(peakNits, Math.max(0, channel * gain))) as Rgb;
  return transfer === 'pq' ? (light.map(pqEncode) as Rgb) : hlgEncodeDisplayLight(light);
}

/** Lattice size of the mapping LUT: ≤ 0.5 10-bit code of interpolation error on greys above 10 % signal. */
export const EXPAND_LUT_SIZE = 33;
/**
 * The LUT's input reaches this R'G'B' (its DOMAIN_MAX, on float input): past EXPAND_TOP_SIGNAL, and SDR white
 * (1.0) falls on a lattice point (29 of 32) so the knee of the shoulder is not blurred by interpolation.
 */
export const LUT_DOMAIN_MAX = 32 / 29;

export interface ExpandLutInput {
  choice: MappingChoice;
  sourcePrimaries: string | null;
  sourceTransfer: string | null;
  size?: number;
}

/**
 * A mapping as an Adobe/Resolve `.cube` 3D LUT for ffmpeg's lut3d on float R'G'B': input the source's R'G'B'
 * (full range, 0…LUT_DOMAIN_MAX so super-whites keep their values), output BT.2020 PQ or HLG R'G'B' (full
 * range); red varies fastest, as the format says. `expand` always goes through it, and so does `reference`
 * with HLG (zimg's HLG conversion applies the OOTF per channel, which shifts hue on a BT.2100 display).
 */
export function buildExpandCube(input: ExpandLutInput): string {
  const size = input.size ?? EXPAND_LUT_SIZE;
  const curve = lightCurve(input.choice);
  const peak = input.choice.mapping === 'expand' ? expandPeak(input.choice) : 10000;
  const matrix = toBt2020Matrix(input.sourcePrimaries);
  const title = input.choice.mapping === 'expand' ? 'expand (BT.2446-1 Method C)' : 'reference (BT.2408)';
  const lines = [
    `TITLE "mediajobs ${title} to ${input.choice.transfer}"`,
    `LUT_3D_SIZE ${size}`,
    'DOMAIN_MIN 0 0 0',
    `DOMAIN_MAX ${[0, 1, 2].map(() => LUT_DOMAIN_MAX.toFixed(8)).join(' ')}`,
  ];
  const step = LUT_DOMAIN_MAX / (size - 1);
  for (let b = 0; b < size; b++) {
    for (let g = 0; g < size; g++) {
      for (let r = 0; r < size; r++) {
        const source: Rgb = [r * step, g * step, b * step];
        const out = mapColour(source, curve, peak, matrix, input.sourceTransfer, input.choice.transfer);
        lines.push(out.map((value) => value.toFixed(6)).join(' '));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Whether a choice is made through the LUT (buildExpandCube) rather than zscale's one step. */
export function usesMappingLut(choice: Pick<MappingChoice, 'mapping' | 'transfer'>): boolean {
  return choice.mapping === 'expand' || choice.transfer === 'hlg';
}
