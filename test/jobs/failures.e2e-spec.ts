// Every submit-time and processing code from its real cause (docs/api-decisions.md §5), cancel and retention.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { AdminService } from '../../src/admin/admin.service';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { startStack } from '../support/worker';
import { clipOfDuration, mkvClip, mpeg4Part2Mp4, randomBytesFile, sdrMp4 } from '../fixtures/media';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

const exec = promisify(execFile);

/** ffmpeg processes whose command line mentions this job (its work directory carries the job id). */
async function ffmpegProcessesFor(jobId: string): Promise<string[]> {
  const { stdout } = await exec('ps', ['-eo', 'args']);
  return stdout.split('\n').filter((line) => line.includes('ffmpeg') && line.includes(jobId));
}

type Stack = Awaited<ReturnType<typeof startStack>>;

async function storageDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'mj-fail-'));
}

describe('failure codes from real causes', () => {
  let origin: MediaOrigin;
  let stack: Stack;
  let api: TestApi;

  beforeAll(async () => {
    origin = await startMediaOrigin();
    stack = await startStack({
      REGION: 'fail',
      STORAGE_DIR: await storageDir(),
      ALLOW_PRIVATE_URLS: '127.0.0.1',
      MAX_DURATION_SECONDS: '5',
    });
    api = stack.api;
  });
  afterAll(async () => {
    await stack.close();
    await origin.close();
  });

  describe('at submit (nothing is held)', () => {
    it.each([
      ['an MKV container → 415 unsupported_format', mkvClip, 415, 'unsupported_format'],
      ['MPEG-4 part 2 video → 415 unsupported_codec', mpeg4Part2Mp4, 415, 'unsupported_codec'],
      ['random bytes → 422 invalid_media', () => randomBytesFile(), 422, 'invalid_media'],
      ['a 6 s clip over a 5 s maximum → 400 duration_exceeded', () => clipOfDuration(6), 400, 'duration_exceeded'],
    ] as const)('%s', async (_label, make, status, code) => {
      const account = await createAccount(api, { credits: 100 });
      const uploadId = await upload(api, account.apiKey, await make());
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      expect(response.status).toBe(status);
      expect(response.body.error).toMatchObject({ code, type: 'invalid_request_error', param: 'inputs[0].upload_id' });
      expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 100, reserved_credits: 0 });
    });

    it('content blocked after upload → content_policy_violation at submit', async () => {
      const account = await createAccount(api, { credits: 100 });
      const path = await sdrMp4({ width: 160, height: 90 });
      const uploadId = await upload(api, account.apiKey, path);
      await api.app.get(AdminService).blockContent(
        createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      );
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      expect(response.status).toBe(422);
      expect(response.body.error).toMatchObject({ code: 'content_policy_violation', param: 'inputs[0].upload_id' });
      await api.app.get(AdminService).unblockContent(
        createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      );
    });

    it('a source URL that answers 404 (e.g. an expired signature) → invalid_url', async () => {
      const account = await createAccount(api, { credits: 100 });
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ source_url: origin.url('gone.mp4?X-Amz-Expires=1') }] },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_url', param: 'inputs[0].source_url' });
    });
  });

  it('a source_url job: probed through the pinned proxy, downloaded by the worker, HDR10 out', async () => {
    const account = await createAccount(api, { credits: 100 });
    origin.serve('ok.mp4', await sdrMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: origin.url('ok.mp4') }] },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body.items[0].source).toEqual({ type: 'url', url: origin.url('ok.mp4'), filename: null });
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job).toMatchObject({ status: 'succeeded', billing: { state: 'settled' } });
  });

  it('the source host fails during download → upstream_error (retryable), charged 0', async () => {
    const account = await createAccount(api, { credits: 100 });
    origin.serve('flaky.mp4', await sdrMp4({ width: 160, height: 90 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: origin.url('flaky.mp4') }] },
    });
    expect(submitted.status).toBe(202);
    origin.failWith('flaky.mp4', 503);
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job).toMatchObject({
      status: 'failed',
      error: { code: 'upstream_error', type: 'processing_error', retryable: true },
      billing: { charged_credits: 0, refunded: true },
    });
  });

  it('cancel while processing: ffmpeg is killed within 2 s, charged 0', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 1280, height: 720, seconds: 4, audio: false }),
    );
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    const jobId = submitted.body.job_id as string;
    const processing = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, ['processing', 'succeeded']);
    expect(processing.status).toBe('processing');
    expect(processing.started_at).not.toBeNull();
    // Wait until ffmpeg really runs and has reported progress, then cancel.
    let progress = 0;
    for (let i = 0; i < 100 && progress === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      progress = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body.progress;
    }
    expect(progress).toBeGreaterThan(0);
    expect(progress).toBeLessThan(1);
    expect((await ffmpegProcessesFor(jobId)).length).toBeGreaterThan(0);
    const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, { key: account.apiKey });
    const at = Date.now();
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      error: { code: 'job_cancelled' },
      billing: { charged_credits: 0, refunded: true },
    });
    while ((await ffmpegProcessesFor(jobId)).length > 0) {
      expect(Date.now() - at).toBeLessThan(2000);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The worker's late result never overwrites the cancellation.
    await new Promise((r) => setTimeout(r, 500));
    const after = await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey });
    expect(after.body).toMatchObject({ status: 'cancelled', billing: { charged_credits: 0, state: 'released' } });
    expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 1000, reserved_credits: 0 });
  });

  it('lists jobs newest first, filters by status, pages with a cursor', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90 }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      ids.push(response.body.job_id);
      await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${response.body.job_id}`);
    }
    const page1 = await call(api, 'GET', '/v1/sdr2hdr/jobs?limit=2', { key: account.apiKey });
    expect(page1.body).toMatchObject({ object: 'list', has_more: true });
    expect(page1.body.data.map((job: { job_id: string }) => job.job_id)).toEqual([ids[2], ids[1]]);
    const page2 = await call(api, 'GET', `/v1/sdr2hdr/jobs?limit=2&starting_after=${page1.body.next_cursor}`, {
      key: account.apiKey,
    });
    expect(page2.body.data.map((job: { job_id: string }) => job.job_id)).toEqual([ids[0]]);
    expect(page2.body).toMatchObject({ has_more: false, next_cursor: null });
    const failed = await call(api, 'GET', '/v1/sdr2hdr/jobs?status=failed', { key: account.apiKey });
    expect(failed.body.data).toEqual([]);
    const audio = await call(api, 'GET', '/v1/audio/jobs', { key: account.apiKey });
    expect(audio.body.data).toEqual([]);
  });

  it('retention: an aged-out job is job_not_found and its output asset_not_found; the purge removes the files', async () => {
    const account = await createAccount(api, { credits: 100 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    const db = api.app.get(DataSource);
    await db.query(`UPDATE jobs SET finished_at = now() - interval '31 days' WHERE id = $1`, [job.job_id]);
    await db.query(`UPDATE assets SET expires_at = now() - interval '1 second' WHERE job_id = $1`, [job.job_id]);
    const read = await call(api, 'GET', `/v1/sdr2hdr/jobs/${job.job_id}`, { key: account.apiKey });
    expect(read.status).toBe(404);
    expect(read.body.error.code).toBe('job_not_found');
    const download = await fetch(job.items[0].output.url);
    expect(download.status).toBe(404);
    expect(((await download.json()) as { error: { code: string } }).error.code).toBe('asset_not_found');
    const purged = await stack.worker.app.get(RetentionPurge).purge();
    expect(purged.assets.done).toBeGreaterThan(0);
    expect(purged.jobs.done).toBeGreaterThan(0);
    const [{ count }] = await db.query('SELECT count(*)::int AS count FROM jobs WHERE id = $1', [job.job_id]);
    expect(count).toBe(0);
  });
});

describe('worker limits', () => {
  it('JOB_TIME_LIMIT_SECONDS passed → the process is killed, failed timeout (retryable), charged 0', async () => {
    const stack = await startStack({ REGION: 'slow', STORAGE_DIR: await storageDir(), JOB_TIME_LIMIT_SECONDS: '1' });
    try {
      const account = await createAccount(stack.api, { credits: 1000 });
      const uploadId = await upload(
        stack.api,
        account.apiKey,
        await sdrMp4({ width: 1280, height: 720, seconds: 4, audio: false }),
      );
      const submitted = await call(stack.api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      const job = await waitForJob(stack.api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
      expect(job).toMatchObject({
        status: 'failed',
        error: { code: 'timeout', retryable: true },
        billing: { charged_credits: 0, refunded: true },
      });
      expect(await ffmpegProcessesFor(job.job_id)).toEqual([]);
    } finally {
      await stack.close();
    }
  });

  it('an input above WORKER_MAX_PIXELS → failed out_of_memory, charged 0', async () => {
    const stack = await startStack({
      REGION: 'small',
      STORAGE_DIR: await storageDir(),
      WORKER_MAX_PIXELS: String(320 * 180 - 1),
    });
    try {
      const account = await createAccount(stack.api, { credits: 100 });
      const uploadId = await upload(stack.api, account.apiKey, await sdrMp4());
      const submitted = await call(stack.api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      expect(submitted.status).toBe(202);
      const job = await waitForJob(stack.api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
      expect(job).toMatchObject({
        status: 'failed',
        error: { code: 'out_of_memory', retryable: false },
        billing: { charged_credits: 0, refunded: true },
      });
    } finally {
      await stack.close();
    }
  });

  it('MAX_QUEUE_DEPTH waiting jobs → 503 queue_full (retryable), nothing held', async () => {
    const api = await startApi({ REGION: 'qfull', MAX_QUEUE_DEPTH: '1', STORAGE_DIR: await storageDir() });
    const redis = new Redis(api.config.redisUrl);
    try {
      // A heartbeat without a consumer: the region is healthy but nothing drains its queue.
      await redis.zadd(`${api.config.redisPrefix}:workers:qfull`, Date.now() + 3600_000, 'test-heartbeat');
      const account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
      const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90 }));
      const body = { inputs: [{ upload_id: uploadId }] };
      expect((await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body })).status).toBe(202);
      const full = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
      expect(full.status).toBe(503);
      expect(full.body.error).toMatchObject({ code: 'queue_full', type: 'rate_limit_error', retryable: true });
      expect(full.headers.get('retry-after')).not.toBeNull();
      const balance = await credits(api, account.apiKey);
      expect(balance.reserved_credits).toBe(balance.balance_credits - balance.available_credits);
      expect(balance.reserved_credits).toBeLessThan(balance.balance_credits);
    } finally {
      redis.disconnect();
      await api.close();
    }
  });
});
