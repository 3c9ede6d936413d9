// The light meter's numbers (src/media/light-levels.ts) against the definition computed here from the
// whole decoded picture: every pixel's max(R',G',B') of the file's 16-bit R'G'B' decode (three planes,
// compared in the test), through the same PQ table, summed in the same order. ffmpeg reduces the planes
// to their max before the meter reads them; the levels must be exactly the three planes' — not close.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { pqDecode, type Mapping } from '../../src/media/hdr-mapping';
import { levelsToWrite } from '../../src/media/hdr-metadata';
import { measureLightLevels } from '../../src/media/light-levels';
import { convertSdrToHdr, withinMasteringPeak } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { LIGHT_PATTERN, lightPatternMp4 } from '../fixtures/media';

let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'mediajobs-light-meter-'));
});
afterAll(() => rm(out, { recursive: true, force: true }));

/** MaxCLL/MaxFALL from the three planes of every decoded frame (gbrp16le), rounded as CTA-861.3 carries them. */
async function fromThreePlanes(file: string, width: number, height: number) {
  const n = width * height;
  const table = new Float64Array(65536).map((_, code) => pqDecode(code / 65535));
  const frameBytes = n * 6;
  const frame = Buffer.alloc(frameBytes);
  let filled = 0;
  let frames = 0;
  let brightestPixel = 0;
  let brightestFrame = 0;
  const measure = () => {
    const planes = new Uint16Array(frame.buffer, frame.byteOffset, n * 3);
    let max = 0;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const code = Math.max(planes[i], planes[n + i], planes[2 * n + i]);
      if (code > max) max = code;
      sum += table[code];
    }
    frames += 1;
    brightestPixel = Math.max(brightestPixel, table[max]);
    brightestFrame = Math.max(brightestFrame, sum / n);
  };
  const args = ['-v', 'error', '-i', file, '-map', '0:v:0', '-vf', 'zscale=m=gbr:r=pc,format=gbrp16le'];
  const decoder = spawn(process.env.FFMPEG_PATH || 'ffmpeg', [...args, '-f', 'rawvideo', '-'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const chunk of decoder.stdout as AsyncIterable<Buffer>) {
    for (let at = 0; at < chunk.length;) {
      const take = Math.min(chunk.length - at, frameBytes - filled);
      chunk.copy(frame, filled, at, at + take);
      filled += take;
      at += take;
      if (filled === frameBytes) {
        measure();
        filled = 0;
      }
    }
  }
  return { maxCll: Math.round(brightestPixel), maxFall: Math.round(brightestFrame), frames };
}

describe('light meter (real ffmpeg)', () => {
  it.each(['reference', 'expand'] as Mapping[])(
    'measures exactly the max(R′,G′,B′) of every pixel of every frame (%s)',
    async (mapping) => {
      const input = await lightPatternMp4({ seconds: 2 });
      const probed = await probeMedia(input, { api: 'sdr2hdr' });
      if (!probed.ok) throw new Error(probed.code);
      const output = join(out, `${mapping}.mp4`);
      // With the round trip, as the MP4 path runs it: the meter's picture from a split of one decode.
      const made = await convertSdrToHdr({
        ...DEFAULT_HDR_ENCODE,
        input,
        output,
        probe: probed.probe,
        container: 'mp4',
        mapping,
        peakNits: 1000,
        roundTripSamples: 10,
      });
      if (!made.ok) throw new Error(made.code);
      const { width, height } = LIGHT_PATTERN;
      const expected = await fromThreePlanes(output, width, height);
      expect(expected.frames).toBe(60);
      const measured = await measureLightLevels(output, { width, height });
      if (!measured.ok) throw new Error('not measured');
      expect(measured.levels).toEqual({ maxCll: expected.maxCll, maxFall: expected.maxFall });
      // What the MP4 path wrote: the same levels, within the mastering peak, as written.
      const written = levelsToWrite(withinMasteringPeak(measured.levels, 1000));
      expect({ maxCll: made.light.maxCll, maxFall: made.light.maxFall }).toEqual(written);
    },
    120_000,
  );
});
