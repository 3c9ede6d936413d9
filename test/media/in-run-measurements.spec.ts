// What the run measures of the file it wrote, so the output check need not read it all again
// (src/processing/run-measurements.ts): the figures equal the check's own, measured from the file, and
// they count only while the file is byte for byte the one they were made of.
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { appendFile, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mapping } from '../../src/media/hdr-mapping';
import { ROUND_TRIP_SAMPLES } from '../../src/media/output-checks';
import { packageLadder } from '../../src/media/hls/package-ladder';
import { itemRungs } from '../../src/media/ladder';
import type { LadderSpec } from '../../src/media/output-spec';
import { convertSdrToHdr } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { fileSha256, stillMeasured } from '../../src/processing/run-measurements';
import { sdrMp4 } from '../fixtures/media';
import { roundTripOfFile } from '../support/media-checks';

let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'mediajobs-in-run-'));
});
afterAll(() => rm(out, { recursive: true, force: true }));

describe('measured in the run', () => {
  it.each(['reference', 'expand'] as Mapping[])(
    'the PQ light pass measures the round trip of the written file as the check does from the file (%s)',
    async (mapping) => {
      const input = await sdrMp4({ width: 320, height: 180, seconds: 2 });
      const outcome = await probeMedia(input, { api: 'sdr2hdr' });
      if (!outcome.ok) throw new Error(outcome.code);
      const output = join(out, `${mapping}.mp4`);
      const made = await convertSdrToHdr({
        ...DEFAULT_HDR_ENCODE,
        input,
        output,
        probe: outcome.probe,
        container: 'mp4',
        mapping,
        roundTripSamples: ROUND_TRIP_SAMPLES,
      });
      if (!made.ok) throw new Error(made.code);
      const fromFile = await roundTripOfFile(output, input, { mapping, transfer: 'pq', peakNits: 1000 });
      expect(made.roundTripSsim).toBe(fromFile.ssim);
      expect(fromFile.ssim).toBeGreaterThan(0.8);
    },
  );

  it.each(['reference', 'expand'] as Mapping[])(
    "a package's light pass measures each PQ rung's round trip as the check does from the joined rung (%s)",
    async (mapping) => {
      const input = await sdrMp4({ width: 320, height: 180, seconds: 2 });
      const outcome = await probeMedia(input, { api: 'sdr2hdr' });
      if (!outcome.ok) throw new Error(outcome.code);
      const ladder: LadderSpec = { segmentSeconds: 1, hdrLines: [180, 90], hdrCodecs: ['hevc'], audioKbps: 128 };
      const hdr = { ...DEFAULT_HDR_ENCODE, mapping };
      const made = await packageLadder({
        input,
        probe: outcome.probe,
        rungs: itemRungs(ladder, 'pq', outcome.probe.video!),
        ladder,
        hdr,
        dir: join(out, `package-${mapping}`),
        scratchDir: join(out, `package-${mapping}-scratch`),
      });
      if (!made.ok) throw new Error(made.code);
      const pq = made.renditions.filter((rendition) => rendition.rung.range === 'PQ');
      expect(pq).toHaveLength(2);
      for (const rendition of pq) {
        const fromFile = await roundTripOfFile(rendition.joinedPath, input, {
          mapping,
          transfer: 'pq',
          peakNits: hdr.peakNits,
        });
        expect(rendition.roundTrip).toEqual(fromFile);
        expect(fromFile.ssim).toBeGreaterThan(0.7);
      }
      // The SDR rungs have no light pass: their round trip is not one (the check measures what it needs).
      expect(made.renditions.filter((r) => r.rung.range === 'SDR').every((r) => r.roundTrip === null)).toBe(true);
    },
  );

  it('counts only while the file is the one measured: a changed or replaced file is measured afresh', async () => {
    const file = join(out, 'made.bin');
    await copyFile(await sdrMp4({ width: 320, height: 180, seconds: 2 }), file);
    const measured = { sha256: await fileSha256(file), roundTripSsim: 0.9 };
    expect(await stillMeasured(file, measured)).toEqual(measured);
    await appendFile(file, Buffer.from([0]));
    expect(await stillMeasured(file, measured)).toEqual({ sha256: '' });
    expect(await stillMeasured(file, undefined)).toEqual({ sha256: '' });
  });
});
