// HDR a colourist would sign (issue 40), measured from outside: jobs submitted through the API, run by a real
// worker, their outputs downloaded and decoded by the test decoder (test/support/hdr-decode.ts: 10-bit
// samples, BT.2100's PQ EOTF or HLG's luminance-based OOTF — never zscale's own conversion, which decodes
// the way it encodes). Each item of the issue: HLG keeps colour (1), MaxCLL never above the mastering peak,
// in every place of the file (2), super-whites keep detail (3), no contours in expanded highlights (4), faces
// stay faces (5), the decoded duration is the end of the last frame (6).
//
// The items are three files so that two Jest workers share them (one file took 170 s, the run's tail): this
// one reads the colour chart (items 1, 3, 5: five jobs, each output read once); hdr-colourist-levels.e2e-spec.ts
// the light levels and the duration (items 2, 6), hdr-colourist-gradient.e2e-spec.ts the highlight gradient (item 4).
import { BARS, COLORCHECKER, SKIN, SUPER_WHITES } from '../support/hdr-chart';
import { colourist, EXPANDED, type Output } from '../support/colourist';
import { deltaEItp } from '../support/hdr-decode';

describe('HDR a colourist would sign (issue 40): the colour chart', () => {
  const { chart } = colourist('colourist-chart');

  it.each<Output>([
    { mapping: 'reference', transfer: 'hlg' },
    { mapping: 'expand', transfer: 'hlg' },
    { mapping: 'reference', transfer: 'pq' },
    { mapping: 'expand', transfer: 'pq', peak_nits: 1000 },
  ])(
    "item 1 — %o: 75 %% bars and ColorChecker patches keep the source's chromaticity (Δu′v′ ≤ 0.004)",
    async (output) => {
      const reading = await chart(output);
      const duv = Object.fromEntries([...BARS, ...COLORCHECKER].map((n) => [n, reading.patches.get(n)!.duv]));
      for (const [name, value] of Object.entries(duv))
        expect({ name, duv: value <= 0.004 }).toEqual({ name, duv: true });
      if (output.mapping === 'reference') {
        // At BT.2408's placement (white 203 cd/m²) too: the bars within ΔE_ITP 2 of the source, on average ≤ 1.5.
        const deltas = BARS.map((n) => reading.patches.get(n)!.deltaE);
        expect(Math.max(...deltas)).toBeLessThanOrEqual(2);
        expect(deltas.reduce((sum, d) => sum + d, 0) / deltas.length).toBeLessThanOrEqual(1.5);
      }
    },
    300_000,
  );

  it("item 1 — expand leaves HLG's shadows and dark skin where reference puts them (ΔE_ITP ≤ 1)", async () => {
    const [reference, expand] = await Promise.all([
      chart({ mapping: 'reference', transfer: 'hlg' }),
      chart({ mapping: 'expand', transfer: 'hlg' }),
    ]);
    for (const name of ['dark skin', 'grey 18%', 'foliage']) {
      const [a, b] = [reference, expand].map((r) => r.patches.get(name)!);
      expect({ name, ratio: Math.abs(b.nits / a.nits - 1) < 0.03 }).toEqual({ name, ratio: true });
      expect({ name, deltaE: deltaEItp(a.light, b.light) <= 1 }).toEqual({ name, deltaE: true });
    }
  }, 300_000);

  it.each<Output>(EXPANDED)(
    'item 3 — %o: super-whites 235 < 245 < 254 at least 2 %% apart, white ≥ 80 %% of the peak, none above it',
    async (output) => {
      const reading = await chart(output);
      const peak = output.peak_nits ?? 1000;
      const [white, brighter, brightest] = SUPER_WHITES.map((n) => reading.patches.get(n)!.nits);
      expect(white).toBeGreaterThanOrEqual(0.8 * peak);
      expect(brighter / white).toBeGreaterThanOrEqual(1.02);
      expect(brightest / brighter).toBeGreaterThanOrEqual(1.02);
      expect(brightest).toBeLessThanOrEqual(peak * 1.01);
    },
    300_000,
  );

  it.each([
    [1000, 1.5],
    [4000, 2],
  ])(
    'item 5 — expand at %i cd/m² keeps dark, light and pale skin within ×%d of their reference light',
    async (peak, limit) => {
      const [reference, expand] = await Promise.all([
        chart({ mapping: 'reference', transfer: 'pq' }),
        chart({ mapping: 'expand', transfer: 'pq', peak_nits: peak }),
      ]);
      for (const name of SKIN) {
        const ratio = expand.patches.get(name)!.nits / reference.patches.get(name)!.nits;
        expect({ name, ratio: ratio <= limit && ratio >= 0.97 }).toEqual({ name, ratio: true });
      }
    },
    300_000,
  );
});
