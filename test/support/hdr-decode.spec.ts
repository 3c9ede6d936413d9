// The test decoder (hdr-decode.ts) on values whose answers are known from the standards, and on a file of
// known 10-bit codes written losslessly: what the HDR tests measure is only as good as this.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  bt709ToBt2020,
  decodeLight,
  deltaEItp,
  hlgDisplayLight,
  hlgInverseOetf,
  hlgSystemGamma,
  lightLevels,
  luminance,
  pqEotf,
  pqInverseEotf,
  readCodedFrames,
  upsampleChroma,
  uvDistance,
  uvPrime,
  ycbcrToRgbPrime,
  type CodedFrame,
  type Rgb,
} from './hdr-decode';

const exec = promisify(execFile);

/** BT.2100 HLG OETF, written out here only to make scene light with a known answer. */
function hlgOetf(scene: number): number {
  const a = 0.17883277;
  const b = 1 - 4 * a;
  const c = 0.5 - a * Math.log(4 * a);
  return scene <= 1 / 12 ? Math.sqrt(3 * scene) : a * Math.log(12 * scene - b) + c;
}

/** BT.2020 NCL limited-range codes of an R'G'B' (the inverse of the decoder's matrix). */
function codesOf([r, g, b]: Rgb): Rgb {
  const y = 0.2627 * r + 0.678 * g + 0.0593 * b;
  return [64 + 876 * y, 512 + (896 * (b - y)) / 1.8814, 512 + (896 * (r - y)) / 1.4746];
}

describe('transfer functions', () => {
  it('PQ: 0 → 0, 1 → 10000 cd/m², 0.5 → 92.2, 10-bit code 573 → 203.7 (docs/media.md), and round-trips', () => {
    expect(pqEotf(0)).toBe(0);
    expect(pqEotf(1)).toBeCloseTo(10000, 6);
    expect(pqEotf(0.5)).toBeCloseTo(92.25, 1);
    expect(pqEotf((573 - 64) / 876)).toBeCloseTo(203.7, 0);
    for (const nits of [0.01, 1, 100, 203, 1000, 4000]) expect(pqEotf(pqInverseEotf(nits)) / nits).toBeCloseTo(1, 9);
  });

  it('HLG: 75 % signal of a grey is 203 cd/m² on the 1000 cd/m² display (BT.2408); 50 % is 1/12 scene light', () => {
    expect(hlgInverseOetf(0.5)).toBeCloseTo(1 / 12, 12);
    expect(hlgInverseOetf(1)).toBeCloseTo(1, 6);
    const grey = hlgDisplayLight([0.75, 0.75, 0.75]);
    expect(luminance(grey)).toBeCloseTo(203, 0);
    expect(luminance(hlgDisplayLight([1, 1, 1]))).toBeCloseTo(1000, 3);
  });

  it("HLG's system gamma: 1.2 at 1000 cd/m², BT.2100's extension elsewhere (1.326 at 2000, 1.033 at 400)", () => {
    expect(hlgSystemGamma(1000)).toBe(1.2);
    expect(hlgSystemGamma(2000)).toBeCloseTo(1.3264, 4);
    expect(hlgSystemGamma(400)).toBeCloseTo(1.0329, 4);
    // A white at full signal reaches the display's peak whatever the gamma.
    expect(luminance(hlgDisplayLight([1, 1, 1], 2000))).toBeCloseTo(2000, 3);
  });

  it("HLG's OOTF scales R, G and B by one factor: the display shows the scene's chromaticity", () => {
    const scene: Rgb = [0.2, 0.05, 0.02];
    const shown = hlgDisplayLight(scene.map(hlgOetf) as Rgb);
    expect(shown[1] / shown[0]).toBeCloseTo(0.25, 9);
    expect(shown[2] / shown[0]).toBeCloseTo(0.1, 9);
    expect(uvDistance(uvPrime(shown), uvPrime(scene))).toBeLessThan(1e-9);
    // …and the luminance follows Ys^1.2 on the 1000 cd/m² display.
    expect(luminance(shown)).toBeCloseTo(1000 * luminance(scene) ** 1.2, 6);
  });
});

describe('samples to R′G′B′', () => {
  it('BT.2020 NCL limited range: 64 is black, 940 white, and a primary decodes to itself', () => {
    const close = (actual: Rgb, expected: Rgb) =>
      actual.forEach((value, i) => expect(value).toBeCloseTo(expected[i], 3));
    close(ycbcrToRgbPrime(64, 512, 512), [0, 0, 0]);
    close(ycbcrToRgbPrime(940, 512, 512), [1, 1, 1]);
    for (const primary of [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
      [0.3, 0.6, 0.9],
    ] as Rgb[]) {
      const [y, cb, cr] = codesOf(primary);
      close(ycbcrToRgbPrime(y, cb, cr), primary);
    }
  });

  it('upsamples 4:2:0 chroma with left siting: even columns take the sample, odd ones the mean; rows 3/4 + 1/4', () => {
    // 4×4 luma, 2×2 chroma: Cb columns 100 | 300, rows alike; Cr rows 100 / 300, columns alike.
    const frame: CodedFrame = {
      width: 4,
      height: 4,
      subsampling: '420',
      y: new Uint16Array(16).fill(500),
      cb: Uint16Array.from([100, 300, 100, 300]),
      cr: Uint16Array.from([100, 100, 300, 300]),
    };
    const { cb, cr } = upsampleChroma(frame);
    expect(Array.from(cb.subarray(0, 4))).toEqual([100, 200, 300, 300]);
    // Row 0 and 3 are at the edge (nearest row repeated); rows 1 and 2 sit 1/4 and 3/4 of the way.
    expect([0, 1, 2, 3].map((row) => cr[row * 4])).toEqual([100, 150, 250, 300]);
    const flat = upsampleChroma({ ...frame, cb: new Uint16Array(4).fill(612), cr: new Uint16Array(4).fill(412) });
    expect(new Set(flat.cb)).toEqual(new Set([612]));
    expect(new Set(flat.cr)).toEqual(new Set([412]));
  });
});

describe('colour measures', () => {
  it("u′v′: D65 white at (0.1978, 0.4683), BT.709's red at (0.4507, 0.5229) once in BT.2020", () => {
    const [u, v] = uvPrime([1, 1, 1]);
    expect(u).toBeCloseTo(0.1978, 4);
    expect(v).toBeCloseTo(0.4683, 4);
    const red = uvPrime(bt709ToBt2020([1, 0, 0]));
    expect(red[0]).toBeCloseTo(0.4507, 3);
    expect(red[1]).toBeCloseTo(0.5229, 3);
    const blue = uvPrime(bt709ToBt2020([0, 0, 1]));
    expect(blue[0]).toBeCloseTo(0.1754, 3);
    expect(blue[1]).toBeCloseTo(0.1579, 3);
  });

  it('ΔE_ITP: 0 for one colour, a grey differs in I only (720·ΔPQ), a hue shift at equal light is not 0', () => {
    expect(deltaEItp([50, 20, 10], [50, 20, 10])).toBe(0);
    expect(deltaEItp([100, 100, 100], [110, 110, 110])).toBeCloseTo(720 * (pqInverseEotf(110) - pqInverseEotf(100)), 9);
    const red: Rgb = [150, 40, 30];
    const shifted: Rgb = [140, 45, 40];
    expect(deltaEItp(red, shifted)).toBeGreaterThan(3);
  });

  it('MaxCLL is the brightest max(R,G,B), MaxFALL the brightest frame average, the quantile ignores a few pixels', () => {
    const frame = (levels: number[]) => ({
      width: levels.length,
      height: 1,
      r: Float64Array.from(levels),
      g: Float64Array.from(levels.map((level) => level / 2)),
      b: new Float64Array(levels.length),
    });
    const bright = Array.from({ length: 10000 }, () => 100);
    bright[5] = 1500;
    const levels = lightLevels([frame(bright), frame(new Array(10000).fill(120))], 0.999);
    expect(levels.maxCll).toBe(1500);
    expect(levels.maxFall).toBeCloseTo(120, 9);
    expect(levels.atQuantile).toBe(120);
  });
});

describe('a file of known codes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-hdr-decode-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads the coded 10-bit samples unchanged (ffmpeg converts nothing) and decodes them to the light they code', async () => {
    // 16×8, 4:2:0: left half the PQ code of 1000 cd/m² grey, right half a BT.2020 red at 100 cd/m².
    const width = 16;
    const height = 8;
    const grey = Math.round(64 + 876 * pqInverseEotf(1000));
    const red = codesOf([pqInverseEotf(100), 0, 0]).map(Math.round) as Rgb;
    const y = new Uint16Array(width * height).map((_, i) => (i % width < 8 ? grey : red[0]));
    const chroma = (value: number) =>
      new Uint16Array((width / 2) * (height / 2)).map((_, i) => (i % 8 < 4 ? 512 : value));
    const raw = join(dir, 'known.yuv');
    const samples = [y, chroma(red[1]), chroma(red[2])];
    await writeFile(raw, Buffer.concat(samples.map((plane) => Buffer.from(plane.buffer))));
    const file = join(dir, 'known.mkv');
    await exec(process.env.FFMPEG_PATH || 'ffmpeg', [
      '-v', 'error', '-f', 'rawvideo', '-pix_fmt', 'yuv420p10le', '-s', `${width}x${height}`,
      '-i', raw, '-c:v', 'ffv1', '-color_primaries', 'bt2020', '-color_trc', 'smpte2084', '-colorspace', 'bt2020nc', file,
    ]); // prettier-ignore
    const [frame] = await readCodedFrames(file);
    expect(Array.from(frame.y)).toEqual(Array.from(y));
    expect(Array.from(frame.cb)).toEqual(Array.from(samples[1]));
    const light = decodeLight(frame, 'pq');
    expect(light.g[width + 2] / 1000).toBeCloseTo(1, 2);
    expect(light.r[width + 12] / 100).toBeCloseTo(1, 1);
    expect(light.g[width + 12]).toBeLessThan(1);
  });
});
