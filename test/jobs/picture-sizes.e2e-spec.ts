// Pictures of any shape (a dashboard review): a source with an odd side must succeed with an even-sized
// output (4:2:0 HEVC needs even sides), and a portrait source is priced and limited by its short
// side, as 1080p means for landscape (docs/api-decisions.md §4). Real API, worker and ffmpeg.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';

const exec = promisify(execFile);
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';

async function pictureSize(path: string): Promise<string> {
  const { stdout } = await exec(FFPROBE, [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'json', path],
  ]);
  const [stream] = JSON.parse(stdout).streams as { width: number; height: number }[];
  return `${stream.width}x${stream.height}`;
}

describe('odd-sized and portrait sources', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-pictures-'));
    stack = await startStack({ REGION: 'pictures', STORAGE_DIR: dir });
    api = stack.api;
  });
  afterAll(() => stack?.close());

  /**
   * A 1 s H.264 clip of exactly width×height. 4:2:0 cannot have odd sides (libx264 refuses them, and a
   * lavfi source rounds its size down to even), so it is scaled to the size and encoded 4:4:4 (High
   * 4:4:4 Predictive, as screen recorders write), tagged BT.709.
   */
  async function oddClip(width: number, height: number): Promise<string> {
    const path = join(dir, `odd-${width}x${height}.mp4`);
    await exec(FFMPEG, [
      ...['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'],
      ...['-f', 'lavfi', '-i', `testsrc2=size=${width + (width % 2)}x${height + (height % 2)}:rate=10:duration=1`],
      ...['-vf', `scale=${width}:${height},format=rgb24,scale=out_color_matrix=bt709:out_range=tv,format=yuv444p`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-color_primaries', 'bt709', '-color_trc', 'bt709'],
      ...['-colorspace', 'bt709', '-color_range', 'tv', path],
    ]);
    expect(await pictureSize(path)).toBe(`${width}x${height}`);
    return path;
  }

  /** The picture size of a finished item's output file, read from the file itself. */
  async function outputFileSize(item: { output: { url: string } }): Promise<string> {
    const response = await fetch(item.output.url);
    expect(response.status).toBe(200);
    const path = join(dir, `out-${Date.now()}-${Math.random()}.mp4`);
    await writeFile(path, Buffer.from(await response.arrayBuffer()));
    return pictureSize(path);
  }

  it.each([
    // [source width, height, requested resolution, the output every view and the file must show]
    [360, 203, 'source', '360x202'],
    [1000, 563, '720p', '1000x562'],
    [641, 361, '720p', '640x360'],
    [203, 360, 'source', '202x360'],
  ])('%i×%i at %s succeeds with an even-sized output (%s)', async (width, height, resolution, expected) => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const source = await oddClip(width, height);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, source) }], output: { resolution } },
    });
    expect(submitted.status).toBe(202);
    const [w, h] = expected.split('x').map(Number);
    expect(submitted.body.items[0]).toMatchObject({ output_width: w, output_height: h });
    const done = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    expect({ status: done.status, error: done.items[0].error }).toEqual({ status: 'succeeded', error: null });
    expect(done.items[0]).toMatchObject({ output_width: w, output_height: h });
    expect(await outputFileSize(done.items[0])).toBe(expected);
  });

  const declared = (width: number, height: number) => ({ media: { duration_seconds: 10, width, height } });

  it('a portrait source is priced by its short side: 1080×1920 is 1080p (2 credits/s), as 1920×1080 is', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    const answer = await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', {
      key: account.apiKey,
      body: { inputs: [declared(1920, 1080), declared(1080, 1920), declared(720, 1280)] },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.items.map((item: { estimated_credits: number }) => item.estimated_credits)).toEqual([
      20, 20, 10,
    ]);
  });

  it('a plan whose largest output is 1080p takes a 1080×1920 portrait at its own size (and refuses 2160×3840)', async () => {
    const account = await createAccount(api, { plan: 'starter', credits: 10_000 });
    const answer = await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', {
      key: account.apiKey,
      body: { inputs: [declared(1080, 1920)] },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ accepted: true, estimated_credits: 20 });
    const tooBig = await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', {
      key: account.apiKey,
      body: { inputs: [declared(2160, 3840)] },
    });
    expect(tooBig.body.error ?? tooBig.body.refusal ?? tooBig.body).toMatchObject({ code: 'plan_not_supported' });
  });

  it('a real portrait upload (480×854) is priced, held and charged at the 720p-and-below rate', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const source = await sdrMp4({ width: 480, height: 854, seconds: 2, fps: 10, audio: false });
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, source) }] },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body.billing.estimated_credits).toBe(2);
    const done = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    expect(done.status).toBe('succeeded');
    expect(done.billing.charged_credits).toBe(2);
    expect(await outputFileSize(done.items[0])).toBe('480x854');
  });
});
