// A test decoder for HDR outputs that owes nothing to ffmpeg's or zimg's colour code, nor to the service's
// own formulas (src/media/hdr-mapping.ts): ffmpeg only hands over the coded 10-bit Y'CbCr samples
// (`-f rawvideo` in the stream's own pixel format, no conversion); chroma is upsampled here, the BT.2020
// non-constant-luminance matrix (limited range) gives R'G'B', and the light follows from BT.2100 — PQ's
// EOTF per channel, or HLG's inverse OETF per channel and then the OOTF, one gain from the scene
// luminance for R, G and B (so a BT.2100 display shows the scene's chromaticity). On that light: cd/m²,
// CIE 1976 u'v', ΔE_ITP (ITU-R BT.2124) and MaxCLL (CTA-861.3: max(R,G,B) of a pixel). A zscale round trip
// decodes the way it encodes and cannot see a transfer or OOTF error; this can.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';

export type Rgb = [number, number, number];
export type HdrTransfer = 'pq' | 'hlg';

// --- the coded samples ------------------------------------------------------------------------------

/** One frame's coded samples, 10-bit codes, chroma at its coded size. */
export interface CodedFrame {
  width: number;
  height: number;
  subsampling: '420' | '444';
  y: Uint16Array;
  cb: Uint16Array;
  cr: Uint16Array;
}

const FORMATS: Record<string, CodedFrame['subsampling']> = { yuv420p10le: '420', yuv444p10le: '444' };

/** Every frame of the first video stream as coded (yuv420p10le or yuv444p10le, nothing else). */
export async function readCodedFrames(file: string): Promise<CodedFrame[]> {
  const { stdout: probe } = await exec(FFPROBE, [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=width,height,pix_fmt',
    '-of',
    'json',
    file,
  ]);
  const { width, height, pix_fmt: pixFmt } = JSON.parse(probe).streams[0];
  const subsampling = FORMATS[pixFmt];
  if (!subsampling) throw new Error(`${file}: ${pixFmt} is not a 10-bit Y'CbCr format this decoder reads`);
  // The stream's own pixel format on the way out: ffmpeg copies the decoded planes, it converts nothing.
  const { stdout } = await exec(
    FFMPEG,
    ['-v', 'error', '-i', file, '-map', '0:v:0', '-pix_fmt', pixFmt, '-f', 'rawvideo', '-'],
    {
      encoding: 'buffer',
      maxBuffer: 1 << 30,
    },
  );
  const chromaWidth = subsampling === '420' ? width / 2 : width;
  const chromaHeight = subsampling === '420' ? height / 2 : height;
  const lumaSamples = width * height;
  const chromaSamples = chromaWidth * chromaHeight;
  const frameSamples = lumaSamples + 2 * chromaSamples;
  const frames: CodedFrame[] = [];
  for (let at = 0; at + frameSamples * 2 <= stdout.length; at += frameSamples * 2) {
    const samples = new Uint16Array(new Uint8Array(stdout.subarray(at, at + frameSamples * 2)).buffer);
    frames.push({
      width,
      height,
      subsampling,
      y: samples.subarray(0, lumaSamples),
      cb: samples.subarray(lumaSamples, lumaSamples + chromaSamples),
      cr: samples.subarray(lumaSamples + chromaSamples),
    });
  }
  return frames;
}

/**
 * Chroma at every luma position (codes, fractional). 4:2:0 as HEVC/x265 site it by default (chroma sample
 * location 0, "left"): horizontally on the even luma columns (odd columns take the mean of both neighbours),
 * vertically halfway between two luma rows (weights 3/4 and 1/4 from the nearer and the farther row).
 */
export function upsampleChroma(frame: CodedFrame): { cb: Float64Array; cr: Float64Array } {
  const { width, height } = frame;
  if (frame.subsampling === '444') return { cb: Float64Array.from(frame.cb), cr: Float64Array.from(frame.cr) };
  const cw = width / 2;
  const ch = height / 2;
  const plane = (source: Uint16Array): Float64Array => {
    const at = (x: number, y: number) =>
      source[Math.min(Math.max(y, 0), ch - 1) * cw + Math.min(Math.max(x, 0), cw - 1)];
    const out = new Float64Array(width * height);
    for (let y = 0; y < height; y++) {
      // Luma row y sits at chroma row (y - 0.5) / 2: the nearer chroma row weighs 3/4.
      const near = y >> 1;
      const far = y % 2 === 0 ? near - 1 : near + 1;
      for (let x = 0; x < width; x++) {
        const column = (cy: number) => (x % 2 === 0 ? at(x >> 1, cy) : (at(x >> 1, cy) + at((x >> 1) + 1, cy)) / 2);
        out[y * width + x] = 0.75 * column(near) + 0.25 * column(far);
      }
    }
    return out;
  };
  return { cb: plane(frame.cb), cr: plane(frame.cr) };
}

/** BT.2020 NCL, 10-bit limited range: Y'CbCr codes → R'G'B' (0..1 nominal, not clipped). */
export function ycbcrToRgbPrime(y: number, cb: number, cr: number): Rgb {
  const luma = (y - 64) / 876;
  const blue = (cb - 512) / 896;
  const red = (cr - 512) / 896;
  const r = luma + 1.4746 * red;
  const b = luma + 1.8814 * blue;
  const g = (luma - 0.2627 * r - 0.0593 * b) / 0.678;
  return [r, g, b];
}

// --- BT.2100 ----------------------------------------------------------------------------------------

const M1 = 2610 / 16384;
const M2 = 2523 / 32;
const C1 = 3424 / 4096;
const C2 = 2413 / 128;
const C3 = 2392 / 128;

/** SMPTE ST 2084 EOTF: signal (0..1) → cd/m². */
export function pqEotf(signal: number): number {
  const e = Math.min(Math.max(signal, 0), 1) ** (1 / M2);
  return 10000 * (Math.max(e - C1, 0) / (C2 - C3 * e)) ** (1 / M1);
}

/** SMPTE ST 2084 inverse EOTF: cd/m² → signal (0..1). */
export function pqInverseEotf(nits: number): number {
  const y = (Math.min(Math.max(nits, 0), 10000) / 10000) ** M1;
  return ((C1 + C2 * y) / (1 + C3 * y)) ** M2;
}

const HLG_A = 0.17883277;
const HLG_B = 1 - 4 * HLG_A;
const HLG_C = 0.5 - HLG_A * Math.log(4 * HLG_A);

/** BT.2100 HLG inverse OETF: signal (0..1) → normalised scene light (0..1). */
export function hlgInverseOetf(signal: number): number {
  const e = Math.min(Math.max(signal, 0), 1);
  return e <= 0.5 ? (e * e) / 3 : (Math.exp((e - HLG_C) / HLG_A) + HLG_B) / 12;
}

/** BT.2100 HLG system gamma for a display of `peakNits`: 1.2 at 1000 cd/m², 1.2 + 0.42·log10(Lw/1000) around it. */
export function hlgSystemGamma(peakNits: number): number {
  return 1.2 + 0.42 * Math.log10(peakNits / 1000);
}

/**
 * HLG signals → display light (cd/m² per BT.2020 channel) on a display of `peakNits` with black at 0: the
 * inverse OETF per channel, then the OOTF F = α · Ys^(γ−1) · E with Ys the scene luminance — one factor for
 * all three channels.
 */
export function hlgDisplayLight(signals: Rgb, peakNits = 1000): Rgb {
  const scene = signals.map(hlgInverseOetf) as Rgb;
  const ys = luminance(scene);
  if (ys <= 0) return [0, 0, 0];
  const gain = peakNits * ys ** (hlgSystemGamma(peakNits) - 1);
  return scene.map((e) => e * gain) as Rgb;
}

/** R'G'B' of the output → display light per channel, cd/m². */
export function displayLight(rgbPrime: Rgb, transfer: HdrTransfer, hlgPeakNits = 1000): Rgb {
  return transfer === 'pq' ? (rgbPrime.map(pqEotf) as Rgb) : hlgDisplayLight(rgbPrime, hlgPeakNits);
}

// --- colour ---------------------------------------------------------------------------------------

/** BT.2020 (and BT.2100) luminance of linear RGB. */
export function luminance([r, g, b]: Rgb): number {
  return 0.2627 * r + 0.678 * g + 0.0593 * b;
}

/** Linear BT.2020 RGB → CIE XYZ (D65), the matrix from BT.2020's primaries. */
export function bt2020ToXyz([r, g, b]: Rgb): Rgb {
  return [
    0.636958 * r + 0.144617 * g + 0.168881 * b,
    0.2627 * r + 0.677998 * g + 0.059302 * b,
    0.028073 * g + 1.060985 * b,
  ];
}

/** Linear BT.709 RGB → linear BT.2020 RGB (ITU-R BT.2087). */
export function bt709ToBt2020([r, g, b]: Rgb): Rgb {
  return [
    0.6274 * r + 0.3293 * g + 0.0433 * b,
    0.0691 * r + 0.9195 * g + 0.0114 * b,
    0.0164 * r + 0.088 * g + 0.8956 * b,
  ];
}

/** CIE 1976 u'v' of linear BT.2020 RGB. */
export function uvPrime(rgb: Rgb): [number, number] {
  const [x, y, z] = bt2020ToXyz(rgb);
  const d = x + 15 * y + 3 * z;
  return [(4 * x) / d, (9 * y) / d];
}

export function uvDistance(a: [number, number], b: [number, number]): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1]);
}

/** ITU-R BT.2124 ΔE_ITP between two colours given as absolute linear BT.2020 light (cd/m²). */
export function deltaEItp(a: Rgb, b: Rgb): number {
  const itp = ([r, g, bl]: Rgb): Rgb => {
    const lms = [
      (1688 * r + 2146 * g + 262 * bl) / 4096,
      (683 * r + 2951 * g + 462 * bl) / 4096,
      (99 * r + 309 * g + 3688 * bl) / 4096,
    ].map(pqInverseEotf);
    const i = 0.5 * lms[0] + 0.5 * lms[1];
    const ct = (6610 * lms[0] - 13613 * lms[1] + 7003 * lms[2]) / 4096;
    const cp = (17933 * lms[0] - 17390 * lms[1] - 543 * lms[2]) / 4096;
    return [i, 0.5 * ct, cp];
  };
  const [i1, t1, p1] = itp(a);
  const [i2, t2, p2] = itp(b);
  return 720 * Math.hypot(i1 - i2, t1 - t2, p1 - p2);
}

/**
 * The light an SDR source colour should have in the HDR output under BT.2408's placement: its BT.709
 * R'G'B' signal (0..1) through the BT.1886 display (γ 2.4, black 0), white at `whiteNits`, in BT.2020.
 */
export function sdrColourLight(rgbPrime709: Rgb, whiteNits = 203): Rgb {
  return bt709ToBt2020(rgbPrime709.map((v) => whiteNits * Math.max(v, 0) ** 2.4) as Rgb);
}

// --- a decoded picture ---------------------------------------------------------------------------

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A frame's display light: three planes of cd/m² (R, G, B), BT.2020 primaries. */
export interface LightFrame {
  width: number;
  height: number;
  r: Float64Array;
  g: Float64Array;
  b: Float64Array;
}

export function decodeLight(frame: CodedFrame, transfer: HdrTransfer, hlgPeakNits = 1000): LightFrame {
  const { width, height } = frame;
  const { cb, cr } = upsampleChroma(frame);
  const n = width * height;
  const out = { width, height, r: new Float64Array(n), g: new Float64Array(n), b: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    const [r, g, b] = displayLight(ycbcrToRgbPrime(frame.y[i], cb[i], cr[i]), transfer, hlgPeakNits);
    out.r[i] = r;
    out.g[i] = g;
    out.b[i] = b;
  }
  return out;
}

/** The mean light of a box (cd/m² per channel), `inset` pixels of its edges left out (4:2:0 smears them). */
export function boxLight(frame: LightFrame, box: Box, inset = 6): Rgb {
  let r = 0;
  let g = 0;
  let b = 0;
  let count = 0;
  for (let y = box.y + inset; y < box.y + box.h - inset; y++) {
    for (let x = box.x + inset; x < box.x + box.w - inset; x++) {
      const i = y * frame.width + x;
      r += frame.r[i];
      g += frame.g[i];
      b += frame.b[i];
      count++;
    }
  }
  return [r / count, g / count, b / count];
}

/**
 * CTA-861.3 light levels of decoded frames: MaxCLL, the brightest pixel's max(R,G,B); MaxFALL, the brightest
 * frame's mean of it; and `quantile` of max(R,G,B) over every pixel (to tell a picture from a few pixels).
 */
export function lightLevels(
  frames: LightFrame[],
  quantile = 0.9999,
): { maxCll: number; maxFall: number; atQuantile: number } {
  let maxCll = 0;
  let maxFall = 0;
  const all = new Float32Array(frames.reduce((sum, frame) => sum + frame.r.length, 0));
  let filled = 0;
  for (const frame of frames) {
    let sum = 0;
    for (let i = 0; i < frame.r.length; i++) {
      const level = Math.max(frame.r[i], frame.g[i], frame.b[i]);
      sum += level;
      if (level > maxCll) maxCll = level;
      all[filled++] = level;
    }
    maxFall = Math.max(maxFall, sum / frame.r.length);
  }
  all.sort();
  const atQuantile = all.length ? all[Math.min(all.length - 1, Math.floor(quantile * all.length))] : 0;
  return { maxCll, maxFall, atQuantile };
}

/** The last frame of an HDR file as display light. */
export async function decodeLastFrame(file: string, transfer: HdrTransfer, hlgPeakNits = 1000): Promise<LightFrame> {
  const frames = await readCodedFrames(file);
  if (!frames.length) throw new Error(`${file}: no frame decoded`);
  return decodeLight(frames[frames.length - 1], transfer, hlgPeakNits);
}
