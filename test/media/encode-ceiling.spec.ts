// The second guard of issue 29 item 1: whatever the probe believed, an encode stops at the probed
// (and priced) length and fails source_changed — the probe reads packet timestamps, so no file reaches
// this from outside today; this holds the line if a container ever fools the probe. Real ffmpeg.
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertSdrToHdr } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { sdrMp4 } from '../fixtures/media';

describe('an encode never runs past the length it was priced for', () => {
  it('a 10 s source believed to last 2 s: stopped near 3 s, source_changed, no output left', async () => {
    const input = await sdrMp4({ width: 160, height: 90, seconds: 10, fps: 10 });
    const probed = await probeMedia(input, { api: 'sdr2hdr' });
    if (!probed.ok) throw new Error(probed.code);
    expect(probed.probe.durationSeconds).toBeCloseTo(10, 0);
    const output = join(await mkdtemp(join(tmpdir(), 'mj-ceiling-')), 'out.mp4');
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      container: 'mp4',
      probe: { ...probed.probe, durationSeconds: 2 },
    });
    expect(result).toMatchObject({ ok: false, code: 'source_changed' });
    expect(existsSync(output)).toBe(false);
  });

  it('an honest source is not touched by the ceiling', async () => {
    const input = await sdrMp4({ width: 160, height: 90, seconds: 3, fps: 10 });
    const probed = await probeMedia(input, { api: 'sdr2hdr' });
    if (!probed.ok) throw new Error(probed.code);
    const output = join(await mkdtemp(join(tmpdir(), 'mj-ceiling-')), 'out.mp4');
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      container: 'mp4',
      probe: probed.probe,
    });
    expect(result).toMatchObject({ ok: true });
    if (result.ok) expect(result.processedSeconds).toBeCloseTo(3, 0);
  });
});
