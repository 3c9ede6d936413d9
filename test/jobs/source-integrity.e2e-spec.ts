// A source_url is fetched twice: probed at submit, downloaded by the worker. These tests hold the
// worker to what the submit checked and priced (issue 12 items 1, 2 and 4), against the real API,
// worker, PostgreSQL, Redis and ffmpeg, with a loopback origin that can change its answer.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { AdminService } from '../../src/admin/admin.service';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { startWorker, type TestWorker } from '../support/worker';
import { clipOfDuration, sdrMp4 } from '../fixtures/media';

const exec = promisify(execFile);

/** Makes the region healthy without a worker, so jobs can be submitted before one starts. */
async function fakeHeartbeat(api: TestApi, region: string): Promise<void> {
  const redis = new Redis(api.config.redisUrl);
  await redis.zadd(`${api.config.redisPrefix}:workers:${region}`, Date.now() + 3600_000, 'test-heartbeat');
  redis.disconnect();
}

/**
 * The same media with bytes of its own (a unique metadata tag), so blocking its SHA-256 cannot touch
 * a fixture another test file uses at the same time (the block list is shared by the test database).
 */
async function uniqueCopy(path: string, dir: string): Promise<{ path: string; sha256: string }> {
  const id = randomUUID();
  const out = join(dir, `${id}.mp4`);
  await exec(process.env.FFMPEG_PATH || 'ffmpeg', [
    ...['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', '-i', path],
    ...['-map', '0', '-c', 'copy', '-metadata', `comment=${id}`, out],
  ]);
  return {
    path: out,
    sha256: createHash('sha256')
      .update(await readFile(out))
      .digest('hex'),
  };
}

describe('a source larger than MAX_SOURCE_BYTES is refused at submit when its size is known (item 4)', () => {
  let origin: MediaOrigin;
  let api: TestApi;
  let large: string;
  let small: string;

  beforeAll(async () => {
    origin = await startMediaOrigin();
    large = await sdrMp4({ width: 320, height: 180, seconds: 2 });
    small = await clipOfDuration(1);
    const limit = (await stat(large)).size - 1;
    expect((await stat(small)).size).toBeLessThanOrEqual(limit);
    api = await startApi({
      REGION: 'local',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-source-size-')),
      ALLOW_PRIVATE_URLS: '127.0.0.1',
      MAX_SOURCE_BYTES: String(limit),
      // The upload limit is not what holds a source: a larger one must not let it through.
      MAX_UPLOAD_BYTES: String(100 * 1024 * 1024),
    });
    // No worker: accepted jobs stay queued.
    await fakeHeartbeat(api, 'local');
  });
  afterAll(async () => {
    await api.close();
    await origin.close();
  });

  it('413 file_too_large with param on the input; nothing is held', async () => {
    const account = await createAccount(api, { credits: 100 });
    origin.serve('large.mp4', large);
    origin.serve('small.mp4', small);
    const refused = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: origin.url('small.mp4') }, { source_url: origin.url('large.mp4') }] },
    });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: 'file_too_large',
      type: 'invalid_request_error',
      param: 'inputs[1].source_url',
      details: { size_bytes: (await stat(large)).size, max_source_bytes: (await stat(large)).size - 1 },
    });
    expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 100, reserved_credits: 0 });

    const accepted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: origin.url('small.mp4') }] },
    });
    expect(accepted.status).toBe(202);
  });
});

/**
 * Every job below is submitted while no worker runs; then the origin changes its answer (or the
 * operator blocks the content), and only then does a worker start: the swap always happens between
 * the submit's probe and the worker's download, as an attacker's server would arrange it.
 */
describe('the worker holds each input to what the submit checked and priced (items 1 and 2)', () => {
  const REGION = 'integrity';
  let origin: MediaOrigin;
  let api: TestApi;
  let worker: TestWorker;
  let dir: string;
  let account: TestAccount;
  const submitted = new Map<string, string>();
  const blocked: string[] = [];

  async function submitSource(name: string, body: object): Promise<void> {
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
    if (response.status !== 202) throw new Error(`${name}: ${response.status} ${JSON.stringify(response.body)}`);
    submitted.set(name, response.headers.get('location')!);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-integrity-'));
    const env = {
      REGION,
      STORAGE_DIR: join(dir, 'storage'),
      ALLOW_PRIVATE_URLS: '127.0.0.1',
      MAX_DURATION_SECONDS: '5',
    };
    origin = await startMediaOrigin();
    api = await startApi(env);
    await fakeHeartbeat(api, REGION);
    account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const admin = api.app.get(AdminService);

    // Probed: 1 s at 160×90 (1 credit). Downloaded: 4 s, 6 s (over MAX_DURATION_SECONDS), or 320×180.
    const swaps: [string, string][] = [
      ['longer', await clipOfDuration(4)],
      ['over-max', await clipOfDuration(6)],
      ['taller', await sdrMp4({ width: 320, height: 180, seconds: 1, fps: 10, audio: false })],
    ];
    for (const [name] of swaps) {
      origin.serve(`${name}.mp4`, await clipOfDuration(1));
      await submitSource(name, { inputs: [{ source_url: origin.url(`${name}.mp4`) }] });
    }
    for (const [name, path] of swaps) origin.serve(`${name}.mp4`, path);

    // Unchanged: the same bytes twice, processed and charged as priced.
    origin.serve('same.mp4', await clipOfDuration(2));
    await submitSource('same', { inputs: [{ source_url: origin.url('same.mp4') }] });

    // Blocked bytes by URL: the submit's probe never reads them whole; the worker's download does.
    const byUrl = await uniqueCopy(await clipOfDuration(2), dir);
    await admin.blockContent(byUrl.sha256);
    blocked.push(byUrl.sha256);
    origin.serve('blocked.mp4', byUrl.path);
    await submitSource('blocked-url', { inputs: [{ source_url: origin.url('blocked.mp4') }] });

    // An upload blocked after its job was accepted: the worker checks the block list again.
    const byUpload = await uniqueCopy(await clipOfDuration(2), dir);
    const uploadId = await upload(api, account.apiKey, byUpload.path);
    await submitSource('blocked-upload', { inputs: [{ upload_id: uploadId }] });
    await admin.blockContent(byUpload.sha256);
    blocked.push(byUpload.sha256);

    worker = await startWorker({ ...env, PUBLIC_BASE_URL: api.config.publicBaseUrl, DOCS_URL: api.config.docsUrl });
  }, 120_000);

  afterAll(async () => {
    for (const sha256 of blocked) await api.app.get(AdminService).unblockContent(sha256);
    await worker?.close();
    await api?.close();
    await origin?.close();
  });

  it.each([
    [
      'a longer clip than was priced → source_changed',
      'longer',
      'source_changed',
      /^The source changed after submit: it now lasts 4 s/,
    ],
    [
      'a clip over MAX_DURATION_SECONDS → duration_exceeded',
      'over-max',
      'duration_exceeded',
      /^The source changed after submit: it now lasts 6 s; this API accepts at most 5 s/,
    ],
    ['a taller picture than was priced → source_changed', 'taller', 'source_changed', /at 320×180 \(priced: 160×90\)/],
  ])('swapped after submit: %s, failed and charged 0', async (_label, name, code, message) => {
    const job = await waitForJob(api, account.apiKey, submitted.get(name)!);
    expect(job).toMatchObject({
      status: 'failed',
      error: { code, message: expect.stringMatching(message) },
      billing: { estimated_credits: 1, charged_credits: 0, refunded: true, state: 'released' },
      items: [{ status: 'failed', output: null, error: { code } }],
    });
    // The worker did download the swapped source: this was the second answer, not a failed fetch.
    expect(origin.requests.filter((line) => line === `GET ${name}.mp4`).length).toBeGreaterThan(0);
  });

  it('the source the submit priced is processed and charged as priced', async () => {
    const job = await waitForJob(api, account.apiKey, submitted.get('same')!);
    expect(job).toMatchObject({ status: 'succeeded', billing: { estimated_credits: 2, charged_credits: 2 } });
  });

  it.each([
    ['by source_url', 'blocked-url'],
    ['an upload blocked after submit', 'blocked-upload'],
  ])('blocked content %s → content_policy_violation, charged 0', async (_label, name) => {
    const job = await waitForJob(api, account.apiKey, submitted.get(name)!);
    expect(job).toMatchObject({
      status: 'failed',
      error: { code: 'content_policy_violation', type: 'invalid_request_error' },
      billing: { charged_credits: 0, refunded: true, state: 'released' },
      items: [{ status: 'failed', output: null }],
    });
  });

  it('every hold was released or settled: only the unchanged job was charged', async () => {
    for (const path of submitted.values()) await waitForJob(api, account.apiKey, path);
    expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 998, reserved_credits: 0 });
  });
});
