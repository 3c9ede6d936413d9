// Segment-parallel sdr2hdr (SEGMENT_SECONDS, docs/api-decisions.md §11): the real API, two worker processes, real
// ffmpeg. A long item is cut at keyframes, its segments are encoded by both workers and joined without
// re-encoding; the result is indistinguishable from a single pass (frame count, HDR10, one HEVC Main10
// stream, audio once, luma SSIM), billed once; a cancel stops every segment; a segment whose worker
// is SIGKILLed is retried alone; the temporary segments are gone afterwards.
import { DEFAULT_HDR_ENCODE } from '../../src/media/encoder-settings';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import { convertSdrToHdr } from '../../src/media/pipelines';
import { probeMedia } from '../../src/media/probe';
import { QUALITY_PRESETS } from '../../src/media/quality-presets';
import { keyframedSdrMp4 } from '../fixtures/media';
import { decodedLightLevels } from '../support/hdr-light';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startWorkerFleet, type WorkerFleet } from '../support/worker-fleet';
import { auditMoney, pollUntil, sleep, type WorkerProcess } from '../support/processes';

const exec = promisify(execFile);
const GRANT = 10_000;
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';

async function ffprobeJson(file: string, args: string[]): Promise<any> {
  const { stdout } = await exec(FFPROBE, ['-v', 'error', ...args, '-of', 'json', file], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout);
}

async function frameCount(file: string): Promise<number> {
  const probe = await ffprobeJson(file, [
    '-count_frames',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=nb_read_frames',
  ]);
  return Number(probe.streams[0].nb_read_frames);
}

async function streams(file: string): Promise<Record<string, string>[]> {
  const probe = await ffprobeJson(file, [
    '-show_entries',
    'stream=codec_type,codec_name,profile,pix_fmt,color_transfer,color_primaries,start_time,duration',
  ]);
  return probe.streams;
}

/** Luma SSIM of `a` against `b` (ffmpeg's ssim filter, Y plane). */
async function lumaSsim(a: string, b: string): Promise<number> {
  const { stderr } = await exec(
    FFMPEG,
    ['-hide_banner', '-i', a, '-i', b, '-lavfi', '[0:v][1:v]ssim', '-f', 'null', '-'],
    {
      maxBuffer: 1 << 24,
    },
  );
  const match = /SSIM Y:([\d.]+)/.exec(stderr);
  if (!match) throw new Error(`no SSIM in: ${stderr.slice(-500)}`);
  return Number(match[1]);
}

describe('segment-parallel sdr2hdr', () => {
  let fleet: WorkerFleet;
  let api: TestApi;
  let account: TestAccount;
  let dir: string;
  let db: DataSource;

  beforeAll(async () => {
    fleet = await startWorkerFleet('segments');
    ({ api, db, dir } = fleet);
  }, 180_000);

  beforeEach(async () => {
    account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
  });

  afterAll(() => fleet?.close(), 120_000);

  /** Two worker processes of `region` splitting at 2 s, one unit at a time each. */
  const twoWorkers = (region: string) => fleet.twoWorkers(region, { SEGMENT_SECONDS: '2' });
  /** The segments whose ffmpeg runs in a worker's process group now. */
  const segmentsRunning = (worker: WorkerProcess, jobId: string) =>
    fleet.ffmpegRunning(worker, new RegExp(`mediajobs-${jobId}-0-s(\\d+)-`));
  const outboxEvents = (jobId: string) => fleet.outboxEvents(jobId);

  async function submit(region: string, uploadId: string, output?: object): Promise<string> {
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], region, output },
    });
    expect(submitted.status).toBe(202);
    return submitted.body.job_id as string;
  }

  async function segmentRows(
    jobId: string,
  ): Promise<{ segment: number; status: string; worker: string; attempts: number }[]> {
    return db.query(`SELECT segment, status, worker, attempts FROM item_segments WHERE job_id = $1 ORDER BY segment`, [
      jobId,
    ]);
  }

  /** Nothing of the job's temporary segments is left in the storage folder. */
  async function expectSegmentsGone(jobId: string): Promise<void> {
    const folder = join(dir, 'storage', 'segments', jobId);
    await pollUntil(
      'the temporary segments to be removed',
      async () => {
        if (!existsSync(folder)) return true;
        const left = await readdir(folder, { recursive: true, withFileTypes: true });
        return left.every((entry) => !entry.isFile()) || undefined;
      },
      15_000,
      200,
    );
  }

  async function download(url: string, name: string): Promise<string> {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const path = join(dir, name);
    await writeFile(path, Buffer.from(await response.arrayBuffer()));
    return path;
  }

  it('a 10 s clip is encoded in segments on both workers and joined: same frames, HDR10, audio once, SSIM ≥ 0.995 against one pass, billed once', async () => {
    const region = 'seg-two';
    const { ids } = await twoWorkers(region);
    const source = await keyframedSdrMp4({ width: 320, height: 180, seconds: 10 });
    const jobId = await submit(region, await upload(api, account.apiKey, source));

    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 240_000);
    expect(job).toMatchObject({ status: 'succeeded', progress: 1, billing: { state: 'settled' } });
    const segments = await segmentRows(jobId);
    expect(segments.length).toBeGreaterThanOrEqual(4);
    expect(segments.every((segment) => segment.status === 'succeeded')).toBe(true);
    // Any worker of the region encodes segments: both did.
    expect(new Set(segments.map((segment) => segment.worker))).toEqual(new Set(ids));

    const output = await download(job.items[0].output.url, `${jobId}.mp4`);
    expect(await frameCount(output)).toBe(await frameCount(source));
    const [video, audio, ...more] = await streams(output);
    expect(more).toEqual([]);
    expect(video).toMatchObject({
      codec_type: 'video',
      codec_name: 'hevc',
      profile: 'Main 10',
      pix_fmt: 'yuv420p10le',
      color_transfer: 'smpte2084',
      color_primaries: 'bt2020',
    });
    const [, sourceAudio] = await streams(source);
    expect(audio).toMatchObject({ codec_type: 'audio', codec_name: 'aac' });
    expect(Math.abs(Number(audio.duration) - Number(sourceAudio.duration))).toBeLessThan(0.05);
    expect(Math.abs(Number(audio.start_time) - Number(video.start_time))).toBeLessThan(0.05);
    expect(await readMediainfoHdr(output)).toMatchObject({ isHdr10: true });

    // The same item in one pass, with the same settings: the joins cost nothing visible.
    const probed = await probeMedia(source, { api: 'sdr2hdr' });
    if (!probed.ok) throw new Error(probed.message);
    const single = join(dir, `${jobId}-single.mp4`);
    const onePass = await convertSdrToHdr({
      ...DEFAULT_HDR_ENCODE,
      input: source,
      output: single,
      container: 'mp4',
      probe: probed.probe,
      ...QUALITY_PRESETS.balanced,
    });
    expect(onePass.ok).toBe(true);
    expect(await lumaSsim(output, single)).toBeGreaterThanOrEqual(0.995);

    expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.succeeded']);
    await expectSegmentsGone(jobId);
  }, 400_000);

  it.each([
    ['expand to PQ 1000', { mapping: 'expand', peak_nits: 1000 }, 'smpte2084'],
    ['expand to HLG', { mapping: 'expand', transfer: 'hlg' }, 'arib-std-b67'],
  ] as const)(
    'segmented %s is seamless: same frames, one HEVC stream with its tags, SSIM ≥ 0.995 against one pass, the whole item’s light',
    async (label, output, transferTag) => {
      const region = `seg-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
      await twoWorkers(region);
      const source = await keyframedSdrMp4({ width: 320, height: 180, seconds: 6, audio: false });
      const jobId = await submit(region, await upload(api, account.apiKey, source), output);
      const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 240_000);
      expect(job).toMatchObject({ status: 'succeeded' });
      expect((await segmentRows(jobId)).length).toBeGreaterThanOrEqual(2);

      const file = await download(job.items[0].output.url, `${jobId}.mp4`);
      expect(await frameCount(file)).toBe(await frameCount(source));
      const [video, ...more] = await streams(file);
      expect(more).toEqual([]);
      expect(video).toMatchObject({ codec_name: 'hevc', profile: 'Main 10', color_transfer: transferTag });

      const probed = await probeMedia(source, { api: 'sdr2hdr' });
      if (!probed.ok) throw new Error(probed.message);
      const single = join(dir, `${jobId}-single.mp4`);
      const transfer = 'transfer' in output ? output.transfer : 'pq';
      const onePass = await convertSdrToHdr({
        ...DEFAULT_HDR_ENCODE,
        input: source,
        output: single,
        container: 'mp4',
        probe: probed.probe,
        mapping: output.mapping,
        transfer,
        ...QUALITY_PRESETS.balanced,
      });
      expect(onePass.ok).toBe(true);
      expect(await lumaSsim(file, single)).toBeGreaterThanOrEqual(0.995);

      const light = job.items[0].output.video.light;
      if (transfer === 'hlg') {
        expect(light).toEqual({ mapping: 'expand', mastering_peak_nits: null, max_cll: null, max_fall: null });
        return;
      }
      // The whole item's levels (the brightest segment's), in the view, the boxes and the SEI alike; MaxCLL
      // never above the mastering peak (issue 40: chroma reconstruction on testsrc2's one-pixel edges decodes
      // brighter than the signal the encode was given).
      const decoded = await decodedLightLevels(file, 320, 180);
      expect(Math.abs(light.max_cll / Math.min(decoded.maxCll, 1000) - 1)).toBeLessThan(0.05);
      expect(Math.abs(light.max_fall / decoded.maxFall - 1)).toBeLessThan(0.05);
      expect(await readHdrMetadata(file)).toEqual({
        levels: { maxCll: light.max_cll, maxFall: light.max_fall },
        peakNits: 1000,
      });
      expect(await readMediainfoHdr(file)).toMatchObject({ maxCll: `${light.max_cll} cd/m2` });
    },
    400_000,
  );

  it('cancel stops every running segment within seconds; charged 0, released once; segments removed', async () => {
    const region = 'seg-cancel';
    const { workers } = await twoWorkers(region);
    const source = await keyframedSdrMp4({ width: 1280, height: 720, seconds: 10, audio: false });
    const jobId = await submit(region, await upload(api, account.apiKey, source));

    await pollUntil(
      'both workers to encode a segment of the job',
      async () =>
        (await Promise.all(workers.map((worker) => segmentsRunning(worker, jobId)))).every((run) => run.length),
      120_000,
      50,
    );
    const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, { key: account.apiKey });
    expect(cancelled.status).toBe(200);

    await pollUntil(
      'every ffmpeg of the job to stop',
      async () =>
        (await Promise.all(workers.map((worker) => segmentsRunning(worker, jobId)))).every((run) => !run.length),
      10_000,
      50,
    );
    await sleep(3000);
    // The segments still queued never start.
    expect(await Promise.all(workers.map((worker) => segmentsRunning(worker, jobId)))).toEqual([[], []]);

    const job = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
    expect(job).toMatchObject({
      status: 'cancelled',
      billing: { charged_credits: 0, refunded: true, state: 'released' },
    });
    expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.cancelled']);
    await expectSegmentsGone(jobId);
    for (const worker of workers) worker.assertAlive();
  }, 400_000);

  it('a worker SIGKILLed mid-segment: that segment alone is encoded again, the job succeeds, charged once', async () => {
    const region = 'seg-kill';
    const { workers, ids } = await twoWorkers(region);
    const [doomed, survivor] = workers;
    // 320×180 as the first test's clip (the same cached fixture): its five 2 s segments still take a worker seconds
    // each, time enough to be caught mid-segment; what is tested is the retry, not the picture size.
    const source = await keyframedSdrMp4({ width: 320, height: 180, seconds: 10 });
    const jobId = await submit(region, await upload(api, account.apiKey, source));

    const cut = await pollUntil(
      'the first worker to encode a segment of the job',
      async () => {
        const running = await segmentsRunning(doomed, jobId);
        return running.length ? running[0] : undefined;
      },
      120_000,
      50,
    );
    await doomed.kill();

    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 240_000);
    expect(job.status).toBe('succeeded');
    const segments = await segmentRows(jobId);
    const again = segments.find((segment) => segment.segment === cut)!;
    expect(again).toMatchObject({ status: 'succeeded', worker: ids[1] });
    expect(again.attempts).toBeGreaterThanOrEqual(2);
    // Retried alone: every other segment was encoded once.
    expect(segments.filter((segment) => segment.segment !== cut).every((segment) => segment.attempts === 1)).toBe(true);

    const output = await download(job.items[0].output.url, `${jobId}.mp4`);
    expect(await frameCount(output)).toBe(await frameCount(source));
    expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.succeeded']);
    await expectSegmentsGone(jobId);
    survivor.assertAlive();
  }, 400_000);
});
