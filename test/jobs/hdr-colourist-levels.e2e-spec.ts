// HDR a colourist would sign (issue 40), measured from outside: jobs submitted through the API, run by a real
// worker, their outputs downloaded and decoded by the test decoder (test/support/hdr-decode.ts: 10-bit
// samples, BT.2100's PQ EOTF or HLG's luminance-based OOTF — never zscale's own conversion, which decodes
// the way it encodes). Each item of the issue: HLG keeps colour (1), MaxCLL never above the mastering peak,
// in every place of the file (2), super-whites keep detail (3), no contours in expanded highlights (4), faces
// stay faces (5), the decoded duration is the end of the last frame (6).
//
// The items are three files so that two Jest workers share them (one file took 170 s, the run's tail): this
// one the light levels and the duration (items 2, 6: four jobs); hdr-colourist-chart.e2e-spec.ts reads the
// colour chart (items 1, 3, 5: five jobs), hdr-colourist-gradient.e2e-spec.ts the highlight gradient (item 4).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import { sdrMp4 } from '../fixtures/media';
import { colourist, type Output } from '../support/colourist';
import { decodeLight, lightLevels, readCodedFrames } from '../support/hdr-decode';

const exec = promisify(execFile);

describe('HDR a colourist would sign (issue 40): light levels, duration', () => {
  const { made } = colourist('colourist-levels');

  it.each<Output>([
    { mapping: 'reference', transfer: 'pq' },
    { mapping: 'expand', transfer: 'pq', peak_nits: 1000 },
    { mapping: 'expand', transfer: 'pq', peak_nits: 4000 },
  ])(
    'item 2 — %o on testsrc2: MaxCLL ≤ the mastering peak in the job view, the SEI, the boxes and mediainfo',
    async (output) => {
      const { job, file } = await made(await sdrMp4({ width: 320, height: 180, seconds: 1 }), output);
      const light = job.items[0].output.video.light;
      const peak = output.peak_nits ?? 1000;
      expect(light.mastering_peak_nits).toBe(peak);
      expect(light.max_cll).toBeLessThanOrEqual(peak);
      expect(light.max_fall).toBeLessThanOrEqual(light.max_cll);
      expect(await readHdrMetadata(file)).toEqual({
        levels: { maxCll: light.max_cll, maxFall: light.max_fall },
        peakNits: peak,
      });
      const info = await readMediainfoHdr(file);
      expect(info?.maxCll).toBe(`${light.max_cll} cd/m2`);
      // No x265 settings string keeps its first bound (cll=1000,1000) against the levels written later.
      const { stdout } = await exec('mediainfo', ['--Inform=Video;%Encoded_Library_Settings%', file]);
      expect(/cll=(\d+),(\d+)/.exec(stdout)?.slice(1) ?? [String(light.max_cll), String(light.max_fall)]).toEqual([
        String(light.max_cll),
        String(light.max_fall),
      ]);
      // The picture itself: light limited before the encode, so all but a few edge pixels (4:2:0
      // reconstruction on one-pixel saturated edges) stay within the peak.
      const frames = (await readCodedFrames(file)).map((frame) => decodeLight(frame, 'pq'));
      expect(lightLevels(frames, 0.999).atQuantile).toBeLessThanOrEqual(peak);
    },
    300_000,
  );

  it('item 6 — a 3.000 s video-only source (90 frames at 30 fps) reports decoded_duration_seconds 3.000 ± half a frame', async () => {
    const { job } = await made(await sdrMp4({ width: 160, height: 90, seconds: 3, audio: false }), {});
    expect(Math.abs(job.items[0].decoded_duration_seconds - 3)).toBeLessThanOrEqual(1 / 60);
    expect(job.items[0].warnings).toEqual([]);
  }, 300_000);
});
