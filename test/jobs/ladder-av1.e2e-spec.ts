// An HLS package with AV1 rungs (`output.codecs: ["hevc","av1"]`, issue 41), end to end through a real API,
// worker, PostgreSQL, ffmpeg and local storage: the item succeeds, its AV1 rung is listed in `renditions[]`
// as PQ with measured light, the master names it with the CODECS string its own av1C record gives, and the
// stream a player fetches through playlist_url carries the HDR10 signalling: BT.2020/PQ colour description,
// the ST 2086 mastering display and the measured content light levels.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';

const REGION = 'ladder-av1';
const run = promisify(execFile);

describe('an HLS package with AV1 rungs', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let storageDir: string;
  let scratch: string;

  beforeAll(async () => {
    storageDir = await mkdtemp(join(tmpdir(), 'mj-av1-'));
    scratch = await mkdtemp(join(tmpdir(), 'mj-av1-fetched-'));
    stack = await startStack({ REGION, STORAGE_DIR: storageDir });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await rm(storageDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  it('succeeds with the AV1 rung signalled as HDR10: colour description, mastering display, measured light', async () => {
    const { api } = stack;
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 3 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output: { package: 'hls', codecs: ['hevc', 'av1'] } },
    });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;
    const view = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 300_000);
    const [item] = view.items;
    expect({ status: item.status, error: item.error }).toEqual({ status: 'succeeded', error: null });
    expect(item.charged_credits).toBeGreaterThan(0);
    for (const check of item.checks) expect(check).toMatchObject({ passed: true });

    const av1 = item.output.renditions.filter((rendition: any) => rendition.codec === 'av1');
    expect(av1).toEqual([
      expect.objectContaining({ codec: 'av1', width: 320, height: 180, transfer: 'smpte2084', video_range: 'PQ' }),
    ]);
    const light = av1[0].light;
    expect(light).toMatchObject({ mapping: 'reference', mastering_peak_nits: 1000 });
    expect(light.max_cll).toBeGreaterThan(0);
    expect(light.max_cll).toBeLessThanOrEqual(1000);
    expect(light.max_fall).toBeGreaterThan(0);
    expect(light.max_fall).toBeLessThanOrEqual(light.max_cll);
    // The AV1 rung's own checks name it, and its signalling check expects AV1, not HEVC.
    const signalling = item.checks.find(
      (check: any) => check.name === 'hdr_signalling' && check.expected.startsWith('av1-180-pq: '),
    );
    expect(signalling).toMatchObject({ passed: true, measured: expect.stringMatching(/^av1 main 10-bit/) });

    // The master, as a player fetches it: the AV1 rung named av01.<profile 0>.<level><tier M>.<10-bit> and its
    // colour (monochrome 0, chroma 4:2:0 at 110–113, BT.2020 primaries 09, PQ 16, BT.2020 matrix 09, limited range 0),
    // which the short form would leave at BT.709.
    const master = await fetch(item.output.playlist_url);
    expect(master.status).toBe(200);
    const text = await master.text();
    const line = text.split('\n').findIndex((each) => each.trim() === 'av1-180-pq/playlist.m3u8');
    expect(line).toBeGreaterThan(0);
    const inf = text.split('\n')[line - 1];
    expect(inf).toMatch(/CODECS="av01\.0\.\d\dM\.10\.0\.11[0-3]\.09\.16\.09\.0,mp4a\.40\.2"/);
    expect(inf).toMatch(/VIDEO-RANGE=PQ/);

    // The rung's init and first segment as a player fetches them, read by ffprobe: what a decoder is told.
    const base = item.output.playlist_url.replace(/master\.m3u8$/, 'av1-180-pq/');
    const parts = await Promise.all(
      ['init.mp4', 'seg-00000.m4s'].map(async (name) => Buffer.from(await (await fetch(base + name)).arrayBuffer())),
    );
    const joined = join(scratch, 'av1.mp4');
    await writeFile(joined, Buffer.concat(parts));
    const { stdout } = await run('ffprobe', [
      ...['-v', 'error', '-select_streams', 'v:0', '-show_streams', '-show_frames'],
      ...['-read_intervals', '%+#1', '-of', 'json', joined],
    ]);
    const probe = JSON.parse(stdout);
    expect(probe.streams[0]).toMatchObject({
      codec_name: 'av1',
      pix_fmt: 'yuv420p10le',
      color_primaries: 'bt2020',
      color_transfer: 'smpte2084',
      color_space: 'bt2020nc',
      color_range: 'tv',
    });
    const sideData = probe.frames[0].side_data_list as any[];
    const mastering = sideData.find((entry) => entry.side_data_type === 'Mastering display metadata');
    const [num, den] = String(mastering.max_luminance).split('/').map(Number);
    expect(num / den).toBe(1000);
    const contentLight = sideData.find((entry) => entry.side_data_type === 'Content light level metadata');
    expect(contentLight).toMatchObject({ max_content: light.max_cll, max_average: light.max_fall });
  }, 400_000);
  it('an HLG ladder: the AV1 rung carries the HLG colour description and no PQ metadata', async () => {
    const { api } = stack;
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 3 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: {
        inputs: [{ upload_id: uploadId }],
        output: { package: 'hls', codecs: ['hevc', 'av1'], transfer: 'hlg' },
      },
    });
    expect(submitted.status).toBe(202);
    const view = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, undefined, 300_000);
    const [item] = view.items;
    expect({ status: item.status, error: item.error }).toEqual({ status: 'succeeded', error: null });
    const av1 = item.output.renditions.filter((rendition: any) => rendition.codec === 'av1');
    expect(av1).toEqual([
      expect.objectContaining({ codec: 'av1', width: 320, height: 180, transfer: 'arib-std-b67', video_range: 'HLG' }),
    ]);
    expect(av1[0].light).toMatchObject({ mastering_peak_nits: null, max_cll: null, max_fall: null });
    expect(item.checks).toContainEqual(
      expect.objectContaining({
        name: 'hdr_signalling',
        passed: true,
        expected: 'av1-180-hlg: av1 main 10-bit, bt2020/arib-std-b67/bt2020nc',
      }),
    );

    const base = item.output.playlist_url.replace(/master\.m3u8$/, 'av1-180-hlg/');
    const parts = await Promise.all(
      ['init.mp4', 'seg-00000.m4s'].map(async (name) => Buffer.from(await (await fetch(base + name)).arrayBuffer())),
    );
    const joined = join(scratch, 'av1-hlg.mp4');
    await writeFile(joined, Buffer.concat(parts));
    const { stdout } = await run('ffprobe', [
      ...['-v', 'error', '-select_streams', 'v:0', '-show_streams', '-show_frames'],
      ...['-read_intervals', '%+#1', '-of', 'json', joined],
    ]);
    const probe = JSON.parse(stdout);
    expect(probe.streams[0]).toMatchObject({
      codec_name: 'av1',
      color_primaries: 'bt2020',
      color_transfer: 'arib-std-b67',
      color_space: 'bt2020nc',
    });
    expect(probe.frames[0].side_data_list ?? []).toEqual([]);
  }, 400_000);
});
