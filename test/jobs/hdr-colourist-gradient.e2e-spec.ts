// HDR a colourist would sign (issue 40), measured from outside: jobs submitted through the API, run by a real
// worker, their outputs downloaded and decoded by the test decoder (test/support/hdr-decode.ts: 10-bit
// samples, BT.2100's PQ EOTF or HLG's luminance-based OOTF — never zscale's own conversion, which decodes
// the way it encodes). Each item of the issue: HLG keeps colour (1), MaxCLL never above the mastering peak,
// in every place of the file (2), super-whites keep detail (3), no contours in expanded highlights (4), faces
// stay faces (5), the decoded duration is the end of the last frame (6).
//
// The items are three files so that two Jest workers share them (one file took 170 s, the run's tail): this
// one the highlight gradient (item 4: three jobs); hdr-colourist-chart.e2e-spec.ts reads the colour chart
// (items 1, 3, 5), hdr-colourist-levels.e2e-spec.ts the light levels and the duration (items 2, 6).
import { highlightGradientMp4 } from '../fixtures/hdr-scenes';
import { colourist, EXPANDED, type Output } from '../support/colourist';
import { readGradient } from '../support/hdr-gradient';

describe('HDR a colourist would sign (issue 40): the highlight gradient', () => {
  const { made } = colourist('colourist-gradient');

  it.each<Output>(EXPANDED)(
    'item 4 — %o: a smooth highlight gradient (8-bit codes 190–254) shows no contour: no jump between neighbouring columns above 3 10-bit codes',
    async (output) => {
      const { file } = await made(await highlightGradientMp4(), output);
      const gradient = await readGradient(file);
      // Each 8-bit step lands 4–8 10-bit codes apart on the expanded curve; seen as a jump, that is a contour.
      expect({ output, jump: gradient.columnMaxJump <= 3 }).toEqual({ output, jump: true });
      // Whatever smooths the steps leaves no visible grain (0.4–0.9 10-bit codes RMS measured; x265 varies) …
      expect(gradient.noiseRms).toBeLessThanOrEqual(1.5);
      // … and keeps the curve: adjacent codes still climb by the expansion's step on average.
      expect(gradient.codeMaxStep).toBeGreaterThan(3);
    },
    300_000,
  );
});
