// What the run measures of the file it wrote, so the output check need not read it all again
// (src/processing/run-measurements.ts): the figures equal the check's own, measured from the file, and
// they count only while the file is byte for byte the one they were made of.
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { appendFile, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mapping } from '../../src/media/hdr-mapping';
import { ROUND_TRIP_SAMPLES } from '../../src/media/output-checks';
import { measureSourceVideo, measureVideo, roundTripSsim } from '../../src/media/output-measure';
import { convertSdrToHdr } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { fileSha256, stillMeasured } from '../../src/processing/run-measurements';
import { sdrMp4 } from '../fixtures/media';

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
      const [video, sourceVideo] = await Promise.all([measureVideo(output, {}), measureSourceVideo(input, false, {})]);
      const fromFile = await roundTripSsim({
        output,
        source: input,
        concat: false,
        sourceVideo,
        outputSize: video,
        choice: { mapping, transfer: 'pq', peakNits: 1000 },
        samples: ROUND_TRIP_SAMPLES,
      });
      expect(made.roundTripSsim).toBe(fromFile);
      expect(fromFile).toBeGreaterThan(0.8);
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
