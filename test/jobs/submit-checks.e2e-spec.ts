import { createHash } from 'node:crypto';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { AdminService } from '../../src/admin/admin.service';
import { workersKey } from '../../src/queues/keys';
import { LIVE_WORKER_BELIEVED_MS } from '../../src/jobs/region-health';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { startWorker, type TestWorker } from '../support/worker';

async function listFiles(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  } catch {
    return [];
  }
}

describe('job submission: request shape, account state and upload checks', () => {
  let api: TestApi;
  let worker: TestWorker;
  let storageDir: string;

  beforeAll(async () => {
    storageDir = await mkdtemp(join(tmpdir(), 'mj-storage-'));
    const env = { STORAGE_DIR: storageDir, MAX_UPLOAD_BYTES: '1000', ALLOW_PRIVATE_URLS: '' };
    worker = await startWorker(env);
    api = await startApi(env);
  });
  afterAll(async () => {
    await api.close();
    await worker.close();
  });

  it.each([
    ['no inputs', {}, 'missing_parameter', 'inputs'],
    ['empty inputs', { inputs: [] }, 'invalid_parameter', 'inputs'],
    ['an input with no source', { inputs: [{}] }, 'missing_parameter', 'inputs[0].source_url'],
    [
      'an ftp URL',
      { inputs: [{ source_url: 'ftp://example.com/a.mp4' }] },
      'invalid_parameter',
      'inputs[0].source_url',
    ],
    [
      'both source_url and upload_id',
      { inputs: [{ upload_id: 'upl_0123456789abcdef', source_url: 'https://example.com/a.mp4' }] },
      'invalid_parameter',
      'inputs[0].upload_id',
    ],
    [
      '21 inputs',
      { inputs: Array.from({ length: 21 }, () => ({ upload_id: 'upl_0123456789abcdef' })) },
      'invalid_parameter',
      'inputs',
    ],
    [
      'an unknown resolution',
      { inputs: [{ upload_id: 'upl_0123456789abcdef' }], output: { resolution: '480p' } },
      'invalid_parameter',
      'output.resolution',
    ],
    [
      'peak_nits of the wrong type',
      { inputs: [{ upload_id: 'upl_0123456789abcdef' }], output: { peak_nits: 'bright' } },
      'invalid_parameter',
      'output.peak_nits',
    ],
    [
      'a non-string metadata value',
      { inputs: [{ upload_id: 'upl_0123456789abcdef' }], metadata: { n: 1 } },
      'invalid_parameter',
      'metadata.n',
    ],
    [
      'an unknown field',
      { inputs: [{ upload_id: 'upl_0123456789abcdef' }], surprise: true },
      'invalid_parameter',
      'surprise',
    ],
  ] as [string, object, string, string][])('%s', async (_label, body, code, param) => {
    const account = await createAccount(api, { credits: 1000 });
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code, param, type: 'invalid_request_error' });
  });

  it('refuses a private-address source URL before connecting (invalid_url)', async () => {
    const account = await createAccount(api, { credits: 1000 });
    // 10.0.0.0/8 and the metadata address are refused by the address check: no connection is attempted.
    for (const url of [
      'http://10.1.2.3/clip.mp4',
      'http://169.254.169.254/latest/meta-data',
      'http://127.0.0.1:9/clip.mp4',
      'http://[::1]/clip.mp4',
    ]) {
      const started = Date.now();
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ source_url: url }] },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_url', param: 'inputs[0].source_url' });
      expect(Date.now() - started).toBeLessThan(1000);
    }
  });

  it('outside production, a loopback source refused with invalid_url names the setting that allows it', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: 'http://127.0.0.1:8080/clip.mp4' }] },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_url', param: 'inputs[0].source_url' });
    expect(response.body.error.message).toContain('private, loopback or link-local address');
    expect(response.body.error.message).toContain('ALLOW_PRIVATE_URLS=127.0.0.1:8080');
  });

  it('an unknown upload id is asset_not_found', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: 'upl_0123456789abcdef' }] },
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({ code: 'asset_not_found', param: 'inputs[0].upload_id' });
  });

  it('plan_not_supported: the free plan has no audio API, and no 2160p output', async () => {
    const account = await createAccount(api, { plan: 'free', credits: 1000 });
    const audio = await call(api, 'POST', '/v1/audio/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: 'upl_0123456789abcdef' }] },
    });
    expect(audio.status).toBe(402);
    expect(audio.body.error).toMatchObject({ code: 'plan_not_supported', type: 'billing_error' });
    const uhd = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: 'upl_0123456789abcdef' }], output: { resolution: '2160p' } },
    });
    expect(uhd.status).toBe(402);
    expect(uhd.body.error).toMatchObject({ code: 'plan_not_supported', param: 'output.resolution' });
  });

  it.each([
    ['inactive', 'subscription_inactive'],
    ['payment_failed', 'payment_failed'],
  ] as const)('subscription %s → 402 %s', async (status, code) => {
    const account = await createAccount(api, { credits: 1000 });
    await api.app.get(AdminService).patchAccount(account.accountId, { subscription_status: status });
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: 'upl_0123456789abcdef' }] },
    });
    expect(response.status).toBe(402);
    expect(response.body.error.code).toBe(code);
  });

  it('region_unavailable for a region without live workers', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: 'upl_0123456789abcdef' }], region: 'mars-1' },
    });
    expect(response.status).toBe(503);
    expect(response.body.error).toMatchObject({ code: 'region_unavailable', retryable: true, param: 'region' });
    expect(response.headers.get('retry-after')).toBe('30');
  });

  // The API believes a live worker it has seen for at most a second (region-health.ts): the region's
  // heartbeat is not read again on every submit, yet a region left without workers refuses within it.
  describe('a region whose workers go away', () => {
    const submitTo = async (region: string, apiKey: string) =>
      call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: apiKey,
        body: { inputs: [{ upload_id: 'upl_0123456789abcdef' }], region },
      });
    /** The region passed step 3 when the submit got as far as the upload (which does not exist). */
    const passedRegion = (response: { status: number; body: { error?: { code?: string } } }) =>
      response.status === 404 && response.body.error?.code === 'asset_not_found';
    const refused = (response: { status: number; body: { error?: { code?: string } } }) =>
      response.status === 503 && response.body.error?.code === 'region_unavailable';

    it('refuses within a second of its last worker leaving, and accepts again as soon as one beats', async () => {
      const account = await createAccount(api, { credits: 1000 });
      const redis = new Redis(api.config.redisUrl);
      const key = workersKey(api.config, 'venus-1');
      try {
        await redis.zadd(key, Date.now(), 'leaving-worker');
        expect(passedRegion(await submitTo('venus-1', account.apiKey))).toBe(true);
        await redis.zrem(key, 'leaving-worker');
        const left = Date.now();
        // The first submit to start once the second is over is refused: it starts at most a pause and
        // one submit's time after it (the slowest seen, on a loaded machine), and takes its own time.
        let slowest = 0;
        const timedSubmit = async () => {
          const started = Date.now();
          const answer = await submitTo('venus-1', account.apiKey);
          slowest = Math.max(slowest, Date.now() - started);
          return answer;
        };
        let response = await timedSubmit();
        while (!refused(response) && Date.now() - left < 5000) {
          await new Promise((resolve) => setTimeout(resolve, 250)); // within the plan's request rate
          response = await timedSubmit();
        }
        expect(refused(response)).toBe(true);
        expect(Date.now() - left).toBeLessThanOrEqual(LIVE_WORKER_BELIEVED_MS + 250 + 2 * slowest);
        // A refusal is not remembered: the first submit after a worker's heartbeat goes through.
        await redis.zadd(key, Date.now(), 'new-worker');
        expect(passedRegion(await submitTo('venus-1', account.apiKey))).toBe(true);
      } finally {
        await redis.del(key);
        redis.disconnect();
      }
    });

    it("is not believed past its last heartbeat's 30 seconds", async () => {
      const account = await createAccount(api, { credits: 1000 });
      const redis = new Redis(api.config.redisUrl);
      const key = workersKey(api.config, 'venus-2');
      try {
        // A worker that stopped beating 29.5 s ago: live for the first submit, gone 500 ms later, while
        // the second of belief would still hold.
        const beat = Date.now() - 29_500;
        await redis.zadd(key, beat, 'silent-worker');
        expect(passedRegion(await submitTo('venus-2', account.apiKey))).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, beat + 30_100 - Date.now())));
        expect(refused(await submitTo('venus-2', account.apiKey))).toBe(true);
      } finally {
        await redis.del(key);
        redis.disconnect();
      }
    });
  });

  describe('uploads', () => {
    it('streams the body to storage and reports size and SHA-256', async () => {
      const account = await createAccount(api);
      const body = Buffer.from('not really a video, but bytes all the same');
      const response = await call(api, 'POST', '/v1/uploads', {
        key: account.apiKey,
        rawBody: body,
        headers: { 'content-type': 'video/mp4' },
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        object: 'upload',
        size_bytes: body.length,
        sha256: createHash('sha256').update(body).digest('hex'),
      });
      expect(response.body.upload_id).toMatch(/^upl_/);
    });

    it('over the size limit → 413 file_too_large, and nothing is kept', async () => {
      const account = await createAccount(api);
      const before = await listFiles(storageDir);
      // Chunked (no Content-Length), so the limit must be enforced while streaming.
      const chunks = (async function* () {
        for (let i = 0; i < 20; i++) yield Buffer.alloc(100, i);
      })();
      const response = await fetch(`${api.url}/v1/uploads`, {
        method: 'POST',
        headers: { 'x-api-key': account.apiKey, 'content-type': 'application/octet-stream' },
        body: chunks as unknown as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      const payload = (await response.json()) as { error: { code: string } };
      expect(response.status).toBe(413);
      expect(payload.error.code).toBe('file_too_large');
      expect(await listFiles(storageDir)).toEqual(before);
    });

    it('a blocked file → 422 content_policy_violation, and nothing is kept', async () => {
      const account = await createAccount(api);
      const body = Buffer.from(`blocked-${Date.now()}`);
      await api.app.get(AdminService).blockContent(createHash('sha256').update(body).digest('hex'), 'test');
      const before = await listFiles(storageDir);
      const response = await call(api, 'POST', '/v1/uploads', {
        key: account.apiKey,
        rawBody: body,
        headers: { 'content-type': 'video/mp4' },
      });
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('content_policy_violation');
      expect(await listFiles(storageDir)).toEqual(before);
    });

    it('a JSON body is not an upload (415)', async () => {
      const account = await createAccount(api);
      const response = await call(api, 'POST', '/v1/uploads', { key: account.apiKey, body: { file: 'x' } });
      expect(response.status).toBe(415);
      expect(response.body.error.code).toBe('unsupported_content_type');
    });
  });

  it("another account's job and an unknown job are the same 404 job_not_found", async () => {
    const account = await createAccount(api);
    const unknown = await call(api, 'GET', '/v1/sdr2hdr/jobs/job_0000000000000000000000', { key: account.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'job_not_found', type: 'resource_error' });
  });
});
