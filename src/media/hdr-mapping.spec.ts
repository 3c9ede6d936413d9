import {
  buildExpandCube,
  expandCurve,
  expandToHdr,
  expandToSdr,
  lightCurve,
  LUT_DOMAIN_MAX,
  mapColour,
  paleSkinGain,
  hlgDecodeDisplayLight,
  hlgEncodeDisplayLight,
  methodCCurve,
  methodCToHdr,
  methodCToSdr,
  neutralLight,
  pqDecode,
  pqEncode,
  SDR_GREY_18_SIGNAL,
  toBt2020Matrix,
  type Rgb,
} from './hdr-mapping';

const tenBit = (signal: number) => 64 + 876 * signal;
/** The 10-bit PQ codes of a grey ramp (every 8-bit code 16–235) through `light` (signal → cd/m²). */
const ramp = (light: (signal: number) => number) =>
  Array.from({ length: 220 }, (_, i) => tenBit(pqEncode(light(i / 219))));
const steps = (codes: number[]) => codes.slice(1).map((code, i) => code - codes[i]);

describe('transfer functions', () => {
  it('PQ matches docs/media.md: 10-bit code 573 ≈ 204 cd/m², 591 ≈ 248, and round-trips', () => {
    expect(pqDecode((573 - 64) / 876)).toBeCloseTo(203.7, 0);
    expect(pqDecode((591 - 64) / 876)).toBeCloseTo(247.7, 0);
    for (const nits of [0.01, 1, 100, 1000, 9999]) expect(pqDecode(pqEncode(nits)) / nits).toBeCloseTo(1, 6);
  });

  it('HLG puts 203 cd/m² white at 75 % signal on the 1000 cd/m² display (BT.2408) and round-trips colours', () => {
    expect(hlgEncodeDisplayLight([203, 203, 203])[0]).toBeCloseTo(0.75, 3);
    expect(hlgEncodeDisplayLight([1000, 1000, 1000])[0]).toBeCloseTo(1, 6);
    const colour: Rgb = [300, 120, 40];
    hlgDecodeDisplayLight(hlgEncodeDisplayLight(colour)).forEach((c, i) => expect(c / colour[i]).toBeCloseTo(1, 6));
  });
});

describe('BT.2446-1 Method C', () => {
  it("rebuilds the Report's published k2 and k4 from its k1, k3 and inflection point (58.5 = 100 × 0.8^2.4)", () => {
    const report = methodCCurve(0.83802, 0.74204, 100 * 0.8 ** 2.4);
    expect(report.k2 / 15.09968).toBeCloseTo(1, 5);
    expect(report.k4 / 78.99439).toBeCloseTo(1, 5);
    // HDR reference white (203) → 96 % SDR signal, as the Report's derivation says.
    expect((methodCToSdr(report, 203) / 100) ** (1 / 2.4)).toBeCloseTo(0.96, 3);
  });

  it.each([400, 1000, 2000, 4000, 10000])(
    'expand to %i cd/m² is the inverse of eq. (5) with its own constants up to white, then a shoulder to the peak',
    (peak) => {
      const curve = expandCurve(peak);
      const c = curve.methodC;
      expect(c.k1).toBeCloseTo(100 / 203, 12);
      // The published form, written out: Y_HDR = Y_HDR,ip · (exp((Y_SDR − k4)/k2) + k3) above the knee.
      for (const sdr of [40, 60, 80, 95, 100]) {
        const published = c.hdrKnee * (Math.exp((sdr - c.k4) / c.k2) + c.k3);
        expect(expandToHdr(curve, sdr) / published).toBeCloseTo(1, 9);
        expect(expandToSdr(curve, expandToHdr(curve, sdr)) / sdr).toBeCloseTo(1, 6);
      }
      // Diffuse white at ≥ 80 % of the peak; super-whites (to code 255) climb the rest, distinct.
      expect(expandToHdr(curve, 100)).toBeGreaterThanOrEqual(0.8 * peak);
      const superWhites = [235, 245, 254, 255].map((code) => expandToHdr(curve, 100 * ((code - 16) / 219) ** 2.4));
      superWhites.slice(1).forEach((light, i) => expect(light / superWhites[i]).toBeGreaterThan(1.002));
      expect(superWhites[1] / superWhites[0]).toBeGreaterThan(1.02);
      expect(superWhites[3] / peak).toBeCloseTo(1, 9);
      expect(expandToSdr(curve, superWhites[2]) / (100 * (238 / 219) ** 2.4)).toBeCloseTo(1, 6);
      // Below the knee: exactly BT.2408's placement (×2.03), so 18 % grey does not move.
      for (const sdr of [0.5, 5, 11.86, 18]) expect(expandToHdr(curve, sdr)).toBeCloseTo(sdr * 2.03, 9);
      // Pale skin (80 % signal) within ×1.45 (≤ 1000 cd/m²) to ×1.95 (≥ 4000) of reference.
      const skin = 100 * 0.8 ** 2.4;
      expect(expandToHdr(curve, skin) / (2.03 * skin)).toBeLessThanOrEqual(paleSkinGain(peak) + 1e-6);
    },
  );

  it('gives faces ×1.45 at 1000 cd/m² and ×1.95 at 4000, the knee rising with the peak', () => {
    expect(paleSkinGain(1000)).toBeCloseTo(1.45, 9);
    expect(paleSkinGain(4000)).toBeCloseTo(1.95, 9);
    expect(expandCurve(4000).methodC.sdrKnee).toBeGreaterThan(expandCurve(1000).methodC.sdrKnee);
  });

  it('puts the 18 % grey card where BT.2408 does (23.7 cd/m²) for every peak', () => {
    for (const peakNits of [1000, 4000]) {
      const grey = neutralLight({ mapping: 'expand', transfer: 'pq', peakNits }, SDR_GREY_18_SIGNAL);
      expect(grey).toBeCloseTo(neutralLight({ mapping: 'reference', transfer: 'pq', peakNits }, SDR_GREY_18_SIGNAL), 9);
      expect(grey).toBeCloseTo(23.7, 1);
    }
  });
});

describe('expand keeps a grey ramp a ramp', () => {
  const referenceSteps = steps(ramp((v) => neutralLight({ mapping: 'reference', transfer: 'pq', peakNits: 1000 }, v)));
  const coarsest = Math.max(...referenceSteps);

  it.each([400, 1000, 2000, 4000])(
    'at %i cd/m²: strictly increasing, no step coarser than the source already has under reference (4000: 6.9)',
    (peakNits) => {
      const codes = ramp((v) => neutralLight({ mapping: 'expand', transfer: 'pq', peakNits }, v));
      const expandSteps = steps(codes);
      expect(Math.min(...expandSteps)).toBeGreaterThan(0);
      // The knee that keeps faces (paleSkinGain) costs 4000 cd/m² a step of 6.9 codes near white.
      expect(Math.max(...expandSteps)).toBeLessThanOrEqual(peakNits === 4000 ? 6.95 : coarsest);
      // and the reference's coarsest step is its near-black one (BT.1886 into PQ), 6.5 codes.
      expect(coarsest).toBeCloseTo(6.47, 1);
    },
  );

  it("the Report's own knee (80 % signal) would not: 8–13 codes per step at the top", () => {
    // k3 solved for 1000 cd/m² at that knee.
    const curve = methodCCurve(100 / 203, 1 - 0.1927, 100 * 0.8 ** 2.4);
    expect(methodCToHdr(curve, 100)).toBeCloseTo(1000, -1);
    const codes = ramp((v) => methodCToHdr(curve, 100 * v ** 2.4));
    expect(Math.max(...steps(codes))).toBeGreaterThan(coarsest);
  });
});

describe('the expand LUT', () => {
  const size = 9;
  const parse = (cube: string) =>
    cube
      .trim()
      .split('\n')
      .filter((line) => /^[\d.]+ [\d.]+ [\d.]+$/.test(line))
      .map((line) => line.split(' ').map(Number) as Rgb);

  it('is a .cube with red fastest whose greys are the curve (≤ 1 %) and whose colours stay in gamut and hue', () => {
    const choice = { mapping: 'expand', transfer: 'pq', peakNits: 1000 } as const;
    const cube = buildExpandCube({ choice, sourcePrimaries: 'bt709', sourceTransfer: 'bt709', size });
    // Float input up to LUT_DOMAIN_MAX: super-whites above 1.0 reach the LUT.
    expect(cube).toMatch(/^TITLE .*\nLUT_3D_SIZE 9\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1.1034\d+ 1.1034\d+ 1.1034\d+\n/);
    const rows = parse(cube);
    expect(rows).toHaveLength(size ** 3);
    for (let i = 1; i < size; i++) {
      const grey = rows[i * (1 + size + size * size)];
      const expected = neutralLight(choice, (i * LUT_DOMAIN_MAX) / (size - 1));
      for (const channel of grey) expect(pqDecode(channel) / expected).toBeCloseTo(1, 2);
    }
    expect(rows[1]).not.toEqual(rows[size]); // red moves first
    const matrix = toBt2020Matrix('bt709');
    for (const row of rows) {
      for (const channel of row) {
        expect(channel).toBeGreaterThanOrEqual(0);
        expect(pqDecode(channel)).toBeLessThanOrEqual(1000 * 1.0001);
      }
    }
    // Hue and saturation kept: the output light is the input light in BT.2020 times one gain.
    const source: Rgb = [0.9, 0.5, 0.2];
    const light = mapColour(source, lightCurve(choice), 1000, matrix, 'bt709', 'pq').map(pqDecode);
    const linear = matrix.map((row) => row.reduce((sum, m, j) => sum + m * 100 * source[j] ** 2.4, 0));
    const gains = light.map((channel, i) => channel / linear[i]);
    expect(gains[1] / gains[0]).toBeCloseTo(1, 4);
    expect(gains[2] / gains[0]).toBeCloseTo(1, 4);
  });

  it("reference with HLG: white at BT.2408's 75 % signal, colours through BT.2100's luminance OOTF (hue kept)", () => {
    const choice = { mapping: 'reference', transfer: 'hlg', peakNits: 1000 } as const;
    const matrix = toBt2020Matrix('bt709');
    const white = mapColour([1, 1, 1], lightCurve(choice), 10000, matrix, 'bt709', 'hlg');
    white.forEach((channel) => expect(channel).toBeCloseTo(0.75, 3));
    const source: Rgb = [0.75, 0.1, 0.1];
    const light = hlgDecodeDisplayLight(mapColour(source, lightCurve(choice), 10000, matrix, 'bt709', 'hlg'));
    const linear = matrix.map((row) => row.reduce((sum, m, j) => sum + m * 203 * source[j] ** 2.4, 0));
    light.forEach((channel, i) => expect(channel / linear[i]).toBeCloseTo(1, 4));
  });

  it('reads other primaries through their own matrix (BT.2020 source: identity)', () => {
    const identity = toBt2020Matrix('bt2020');
    identity.forEach((row, i) => row.forEach((value, j) => expect(value).toBeCloseTo(i === j ? 1 : 0, 6)));
    expect(toBt2020Matrix('unknown-tag')).toEqual(toBt2020Matrix('bt709'));
  });

  it('refuses a peak it cannot expand to', () => {
    expect(() => expandCurve(203)).toThrow(RangeError);
    expect(() => expandCurve(10001)).toThrow(RangeError);
  });
});
