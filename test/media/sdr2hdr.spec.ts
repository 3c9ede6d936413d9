// SDR → HDR10 end to end with real ffmpeg: what ffprobe and mediainfo say about the output.
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import type { ProbeResult } from '../../src/media/media.types';
import { convertSdrToHdr } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { encryptedMp4, sdrMovPcm, sdrMp4, untaggedMp4 } from '../fixtures/media';

const run = promisify(execFile);
let out: string;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'mediajobs-sdr2hdr-'));
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function probed(path: string): Promise<ProbeResult> {
  const outcome = await probeMedia(path, { api: 'sdr2hdr' });
  if (!outcome.ok) throw new Error(`fixture refused: ${outcome.code}`);
  return outcome.probe;
}

interface RawStream {
  codec_type: string;
  codec_name: string;
  codec_tag_string: string;
  profile?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  color_primaries?: string;
  color_transfer?: string;
  color_space?: string;
  color_range?: string;
}

async function streamsOf(path: string): Promise<RawStream[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', path]);
  return (JSON.parse(stdout) as { streams: RawStream[] }).streams;
}

describe('convertSdrToHdr (real ffmpeg)', () => {
  it('turns a BT.709 clip into HDR10 that ffprobe and mediainfo recognise, keeping AAC audio as is', async () => {
    const input = await sdrMp4();
    const output = join(out, 'hdr.mp4');
    const progress: number[] = [];
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      probe: await probed(input),
      container: 'mp4',
      onProgress: (f) => progress.push(f),
    });
    expect(result).toMatchObject({ ok: true, outputPath: output, width: 320, height: 180 });
    if (result.ok) expect(result.processedSeconds).toBeCloseTo(1, 0);

    const [video, audio] = await streamsOf(output);
    expect(video).toMatchObject({
      codec_type: 'video',
      codec_name: 'hevc',
      codec_tag_string: 'hvc1',
      profile: 'Main 10',
      pix_fmt: 'yuv420p10le',
      color_primaries: 'bt2020',
      color_transfer: 'smpte2084',
      color_space: 'bt2020nc',
      color_range: 'tv',
      width: 320,
      height: 180,
    });
    expect(audio).toMatchObject({ codec_type: 'audio', codec_name: 'aac' });

    const hdr = await readMediainfoHdr(output);
    expect(hdr).toMatchObject({
      isHdr10: true,
      hdrFormat: expect.stringContaining('SMPTE ST 2086'),
      hdrCompatibility: expect.stringContaining('HDR10'),
      transfer: 'PQ',
      colourPrimaries: 'BT.2020',
      masteringLuminance: 'min: 0.0001 cd/m2, max: 1000 cd/m2',
    });
    // The picture's own light levels, not constants: testsrc2's saturated edges next to white, resampled to
    // 4:2:0, decode to single channels far above BT.2408 white (the HDR test card in sdr2hdr-light.spec.ts
    // checks the numbers against an independent decode).
    if (!result.ok) throw new Error('conversion failed');
    expect(result.light).toMatchObject({ mapping: 'reference', transfer: 'pq', masteringPeakNits: 1000 });
    expect(hdr?.maxCll).toBe(`${result.light.maxCll} cd/m2`);
    expect(hdr?.maxFall).toBe(`${result.light.maxFall} cd/m2`);
    expect(result.light.maxCll).toBeGreaterThan(203);
    expect(result.light.maxFall).toBeLessThan(result.light.maxCll!);
    expect(progress[progress.length - 1]).toBe(1);
  });

  it('maps SDR 100% white to about 203 cd/m² (10-bit PQ code 573)', async () => {
    const input = await sdrMp4();
    const output = join(out, 'white.mp4');
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      probe: await probed(input),
      container: 'mp4',
    });
    expect(result.ok).toBe(true);
    // testsrc2 has no flat white area we can rely on, so check the conversion's white point on a synthetic frame.
    const { stdout } = await run(
      'ffmpeg',
      [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'color=c=white:s=64x64:d=0.04,format=yuv420p,geq=lum=235:cb=128:cr=128',
        '-vf',
        'zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le',
        '-frames:v',
        '1',
        '-f',
        'rawvideo',
        '-',
      ],
      { encoding: 'buffer' },
    );
    expect(stdout.readUInt16LE(0)).toBe(573);
  });

  it('downscales keeping the aspect, and re-encodes PCM audio from a MOV to AAC', async () => {
    const input = await sdrMp4({ width: 640, height: 360, seconds: 1 });
    const output = join(out, 'small.mov');
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      probe: await probed(input),
      container: 'mov',
      targetHeight: 180,
    });
    expect(result).toMatchObject({ ok: true, width: 320, height: 180 });
    expect((await streamsOf(output))[0]).toMatchObject({ width: 320, height: 180, color_transfer: 'smpte2084' });

    const mov = await sdrMovPcm();
    const movOut = join(out, 'pcm.mov');
    expect(
      await convertSdrToHdr({
        ...DEFAULT_HDR_ENCODE,
        input: mov,
        output: movOut,
        probe: await probed(mov),
        container: 'mov',
      }),
    ).toMatchObject({ ok: true });
    expect((await streamsOf(movOut)).map((s) => s.codec_name)).toEqual(['hevc', 'aac']);
  });

  it('converts an untagged input (read as BT.709) without zscale failing', async () => {
    const input = await untaggedMp4({ audio: false });
    const output = join(out, 'untagged.mp4');
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      probe: await probed(input),
      container: 'mp4',
    });
    expect(result).toMatchObject({ ok: true });
    expect((await streamsOf(output)).map((s) => s.codec_type)).toEqual(['video']);
    expect((await readMediainfoHdr(output))?.isHdr10).toBe(true);
  });

  it('reports increasing progress that ends at exactly 1', async () => {
    const input = await sdrMp4({ seconds: 4, audio: false });
    const progress: number[] = [];
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output: join(out, 'progress.mp4'),
      probe: await probed(input),
      container: 'mp4',
      preset: 'medium',
      onProgress: (f) => progress.push(f),
      progressIntervalMs: 0,
    });
    expect(result.ok).toBe(true);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[progress.length - 1]).toBe(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThan(progress[i - 1]);
    expect(progress.slice(0, -1).every((f) => f >= 0 && f < 1)).toBe(true);
  });

  it('stops within 2 s on abort, answers job_cancelled and leaves no partial output', async () => {
    const input = await sdrMp4({ width: 640, height: 360, seconds: 20, audio: false });
    const output = join(out, 'cancelled.mp4');
    const controller = new AbortController();
    const started = Date.now();
    const pending = convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      probe: await probed(input),
      container: 'mp4',
      preset: 'medium',
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 700);
    const result = await pending;
    const stoppedAfterAbort = Date.now() - started - 700;
    expect(result).toMatchObject({ ok: false, code: 'job_cancelled' });
    expect(stoppedAfterAbort).toBeLessThan(2000);
    expect(existsSync(output)).toBe(false);
  });

  it('refuses a probe that let encrypted input through (submit) as drm_protected, without running ffmpeg', async () => {
    const input = await encryptedMp4();
    const outcome = await probeMedia(input, { api: 'sdr2hdr', allowEncrypted: true });
    if (!outcome.ok) throw new Error(outcome.code);
    const output = join(out, 'cenc-out.mp4');
    expect(
      await convertSdrToHdr({ ...DEFAULT_HDR_ENCODE, input, output, probe: outcome.probe, container: 'mp4' }),
    ).toMatchObject({
      ok: false,
      code: 'drm_protected',
    });
    expect(existsSync(output)).toBe(false);
  });

  it('answers timeout when the time limit passes', async () => {
    const input = await sdrMp4({ width: 640, height: 360, seconds: 20, audio: false });
    const output = join(out, 'timeout.mp4');
    const result = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input,
      output,
      probe: await probed(input),
      container: 'mp4',
      preset: 'medium',
      timeLimitMs: 600,
    });
    expect(result).toMatchObject({ ok: false, code: 'timeout', message: expect.not.stringContaining(out) });
    expect(result.ok ? 0 : result.wallMs).toBeLessThan(2600);
    expect(existsSync(output)).toBe(false);
  });
});
