// The official client (sdk/, built from its sources) against the real service: API, BullMQ worker,
// ffmpeg, Postgres and Redis. Every request goes through a recording proxy, which is also the
// service's public URL, so the test sees exactly what the client sent (keys, Idempotency-Keys) and
// can lose a response on the way back.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptedMp4, sdrMp4 } from '../fixtures/media';
import { AdminService } from '../../src/admin/admin.service';
import { createAccount, type TestApi } from '../support/app';
import { probeVideoStream } from '../support/media-checks';
import { startStack } from '../support/worker';
import { buildSdk, loadSdk, RecordingProxy, type Exchange, type Sdk } from './support';

const JOB_TIMEOUT = 120_000;

type Client = InstanceType<Sdk['MediaJobs']>;
type RetryEvent = Parameters<NonNullable<ConstructorParameters<Sdk['MediaJobs']>[0]>['onRetry'] & {}>[0];

async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('the official client against the real service', () => {
  let sdkDir: string;
  let sdk: Sdk;
  let proxy: RecordingProxy;
  let api: TestApi;
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    sdkDir = buildSdk();
    sdk = loadSdk(sdkDir);
    proxy = await RecordingProxy.start();
    stack = await startStack({
      REGION: 'sdk-e2e',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-sdk-')),
      // Job views link their outputs through the proxy too.
      PUBLIC_BASE_URL: proxy.url,
    });
    api = stack.api;
    proxy.target = api.url;
  });
  afterAll(async () => {
    await stack?.close();
    await proxy?.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  const clientFor = (apiKey: string, onRetry?: (event: RetryEvent) => void): Client =>
    new sdk.MediaJobs({ apiKey, baseUrl: proxy.url, onRetry });
  const jobPosts = (apiKey: string): Exchange[] =>
    proxy.exchanges.filter(
      (e) => e.method === 'POST' && e.path === '/v1/sdr2hdr/jobs' && e.headers['x-api-key'] === apiKey,
    );

  it(
    'uploads.create → jobs.create → waitForJob with onProgress → download: an HEVC HDR10 file, charged the estimate',
    async () => {
      const account = await createAccount(api, { credits: 100 });
      const client = clientFor(account.apiKey);
      const bytes = await readFile(await sdrMp4());

      const upload = await client.uploads.create(bytes);
      expect(upload).toMatchObject({
        object: 'upload',
        upload_id: expect.stringMatching(/^upl_/),
        size_bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        expires_at: expect.any(String),
      });

      const submitted = await client.sdr2hdr.jobs.create({
        inputs: [{ upload_id: upload.upload_id }],
        metadata: { ref: 'sdk' },
      });
      expect(submitted).toMatchObject({ object: 'job', api: 'sdr2hdr', status: 'queued', metadata: { ref: 'sdk' } });
      const estimate = submitted.billing.estimated_credits;
      expect(estimate).toBeGreaterThan(0);

      const seen: { status: string; progress: number }[] = [];
      const job = await client.waitForJob('sdr2hdr', submitted.job_id, {
        pollIntervalMs: 200,
        onProgress: (view) => seen.push({ status: view.status, progress: view.progress }),
      });
      expect(job.status).toBe('succeeded');
      expect(job.progress).toBe(1);
      expect(job.billing).toEqual({
        estimated_credits: estimate,
        charged_credits: estimate,
        refunded: false,
        state: 'settled',
      });
      expect(seen.at(-1)).toEqual({ status: 'succeeded', progress: 1 });
      for (const view of seen) expect(['queued', 'processing', 'succeeded']).toContain(view.status);
      const progress = seen.map((view) => view.progress);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));

      const output = job.items[0]?.output;
      expect(output?.url).toMatch(new RegExp(`^${proxy.url}/v1/assets/ast_\\w+/content\\?expires=\\d+&signature=`));
      const response = await client.assets.download(output!.url);
      expect(response.status).toBe(200);
      const result = Buffer.from(await response.arrayBuffer());
      expect(result.length).toBe(output!.size_bytes);
      const file = join(await mkdtemp(join(tmpdir(), 'mj-sdk-out-')), 'out.mp4');
      await writeFile(file, result);
      expect(await probeVideoStream(file)).toMatchObject({
        codec_name: 'hevc',
        pix_fmt: 'yuv420p10le',
        color_transfer: 'smpte2084',
        color_primaries: 'bt2020',
      });

      // The signed link is its own credential: the API key went to the API, never with the download.
      const assetGets = proxy.exchanges.filter((e) => e.path.startsWith('/v1/assets/'));
      expect(assetGets).toHaveLength(1);
      expect(assetGets[0].headers['x-api-key']).toBeUndefined();
      expect(jobPosts(account.apiKey)).toHaveLength(1);
      expect(jobPosts(account.apiKey)[0].headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    },
    JOB_TIMEOUT,
  );

  it(
    'a failed job (DRM-protected input): waitForJob raises ProcessingError with the job error, charged 0, never resubmitted',
    async () => {
      const account = await createAccount(api, { credits: 50 });
      const client = clientFor(account.apiKey);
      const upload = await client.uploads.createFromFile(await encryptedMp4(), { contentType: 'video/mp4' });
      const submitted = await client.sdr2hdr.jobs.create({ inputs: [{ upload_id: upload.upload_id }] });

      const error = await rejection(client.waitForJob('sdr2hdr', submitted.job_id, { pollIntervalMs: 200 }));
      expect(error).toBeInstanceOf(sdk.ProcessingError);
      expect(error).toBeInstanceOf(sdk.MediaJobsError);
      expect(error).toMatchObject({
        type: 'processing_error',
        code: 'drm_protected',
        requestId: expect.stringMatching(/^req_/),
        docUrl: `${api.config.docsUrl}/errors.html#drm_protected`,
        retryable: false,
        status: null,
        attempts: 0,
      });
      expect(error.job).toMatchObject({ job_id: submitted.job_id, status: 'failed' });
      expect(error.job.error.request_id).toBe(error.requestId);
      expect(error.job.billing).toEqual({
        estimated_credits: submitted.billing.estimated_credits,
        charged_credits: 0,
        refunded: true,
        state: 'released',
      });
      expect(jobPosts(account.apiKey)).toHaveLength(1);
      expect(await client.account.credits()).toMatchObject({
        balance_credits: 50,
        reserved_credits: 0,
        available_credits: 50,
      });
    },
    JOB_TIMEOUT,
  );

  it('402 insufficient_credits raises BillingError with the shortfall in details, without a retry', async () => {
    const account = await createAccount(api, { credits: 0 });
    const client = clientFor(account.apiKey);
    const upload = await client.uploads.create(await readFile(await sdrMp4()), { contentType: 'video/mp4' });

    const error = await rejection(client.sdr2hdr.jobs.create({ inputs: [{ upload_id: upload.upload_id }] }));
    expect(error).toBeInstanceOf(sdk.BillingError);
    expect(error).toMatchObject({
      type: 'billing_error',
      code: 'insufficient_credits',
      status: 402,
      retryable: false,
      attempts: 0,
      requestId: expect.stringMatching(/^req_/),
      docUrl: `${api.config.docsUrl}/errors.html#insufficient_credits`,
    });
    expect(error.details.required_credits).toBeGreaterThan(0);
    expect(error.details.available_credits).toBe(0);
    expect(jobPosts(account.apiKey)).toHaveLength(1);
    expect((await client.sdr2hdr.jobs.list()).data).toEqual([]);
  });

  it('an invalid API key raises AuthError (401 invalid_api_key), without a retry', async () => {
    const client = clientFor(`mjk_${'A'.repeat(40)}`);
    const error = await rejection(client.account.credits());
    expect(error).toBeInstanceOf(sdk.AuthError);
    expect(error).toMatchObject({
      type: 'auth_error',
      code: 'invalid_api_key',
      status: 401,
      retryable: false,
      attempts: 0,
      requestId: expect.stringMatching(/^req_/),
      docUrl: `${api.config.docsUrl}/errors.html#invalid_api_key`,
    });
  });

  it('account.credits() and account.ledger() return the documented shapes, with numbers', async () => {
    const account = await createAccount(api, { credits: 25 });
    const client = clientFor(account.apiKey);
    const balance = await client.account.credits();
    expect(balance).toMatchObject({
      object: 'credit_balance',
      balance_credits: 25,
      reserved_credits: 0,
      available_credits: 25,
      plan: 'pro',
    });
    for (const field of ['balance_credits', 'reserved_credits', 'available_credits', 'spent_usd'] as const) {
      expect(typeof balance[field]).toBe('number');
    }
    expect(typeof balance.quota.processing_minutes_used).toBe('number');
    const ledger = await client.account.ledger({ limit: 10 });
    expect(ledger).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(ledger.data).toEqual([
      expect.objectContaining({ object: 'ledger_entry', kind: 'grant', credits: 25, balance_after: 25 }),
    ]);
  });

  it(
    'a lost response is retried with the same auto-generated Idempotency-Key: one job, one hold',
    async () => {
      const account = await createAccount(api, { credits: 100 });
      const retries: RetryEvent[] = [];
      const client = clientFor(account.apiKey, (event) => retries.push(event));
      const upload = await client.uploads.create(await readFile(await sdrMp4()), { contentType: 'video/mp4' });
      const params = { inputs: [{ upload_id: upload.upload_id }], metadata: { ref: 'lost-response' } };

      proxy.dropResponseOnce(
        (e) => e.method === 'POST' && e.path === '/v1/sdr2hdr/jobs' && e.headers['x-api-key'] === account.apiKey,
      );
      const job = await client.sdr2hdr.jobs.create(params);

      const posts = jobPosts(account.apiKey);
      expect(posts).toHaveLength(2);
      // The first request created the job; only its answer was lost.
      expect(posts[0]).toMatchObject({ dropped: true, status: 202 });
      const key = posts[0].headers['idempotency-key'] as string;
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(posts[1].headers['idempotency-key']).toBe(key);
      expect(posts[1]).toMatchObject({ dropped: false, status: 202 });
      expect(posts[1].responseHeaders?.['idempotent-replayed']).toBe('true');
      expect(retries).toHaveLength(1);
      expect(retries[0].error).toBeInstanceOf(sdk.ConnectionError);

      // The same key passed explicitly replays the same job too.
      const again = await client.sdr2hdr.jobs.create(params, { idempotencyKey: key });
      expect(again.job_id).toBe(job.job_id);

      const list = await client.sdr2hdr.jobs.list({ limit: 10 });
      expect(list).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      expect(list.data.map((view) => view.job_id)).toEqual([job.job_id]);
      // One hold: the job's estimate while it runs, 0 once it has settled (a fast worker), never twice.
      expect([job.billing.estimated_credits, 0]).toContain((await client.account.credits()).reserved_credits);

      const done = await client.waitForJob('sdr2hdr', job.job_id, { pollIntervalMs: 200 });
      expect(done.status).toBe('succeeded');
      const kinds = (await client.account.ledger()).data.map((entry) => entry.kind);
      expect(kinds).toEqual(['capture', 'authorise', 'grant']);
    },
    JOB_TIMEOUT,
  );

  describe('paging, estimate, withResponse, logger, stop reasons (issue 17)', () => {
    // A region with a heartbeat and no worker: jobs submitted there stay queued until cancelled.
    const IDLE = 'sdk-idle';
    beforeAll(async () => {
      const redis = new (await import('ioredis')).Redis(api.config.redisUrl);
      await redis.zadd(`${api.config.redisPrefix}:workers:${IDLE}`, Date.now() + 3600_000, 'test-heartbeat');
      redis.disconnect();
    });

    it('for await over jobs.list({status}) walks every page; toArray({limit}) stops at the limit', async () => {
      const account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
      const client = clientFor(account.apiKey);
      const upload = await client.uploads.create(await readFile(await sdrMp4()), { contentType: 'video/mp4' });
      const cancelled: string[] = [];
      for (let index = 0; index < 5; index += 1) {
        const job = await client.sdr2hdr.jobs.create({ inputs: [{ upload_id: upload.upload_id }], region: IDLE });
        await client.sdr2hdr.jobs.cancel(job.job_id);
        cancelled.unshift(job.job_id); // the list is newest first
      }
      const queued = await client.sdr2hdr.jobs.create({ inputs: [{ upload_id: upload.upload_id }], region: IDLE });

      const before = proxy.exchanges.length;
      const seen: string[] = [];
      for await (const job of client.sdr2hdr.jobs.list({ status: 'cancelled', limit: 2 })) {
        expect(job.status).toBe('cancelled');
        seen.push(job.job_id);
      }
      expect(seen).toEqual(cancelled);
      const pages = proxy.exchanges.slice(before).map((exchange) => exchange.path);
      expect(pages).toEqual([
        '/v1/sdr2hdr/jobs?status=cancelled&limit=2',
        `/v1/sdr2hdr/jobs?status=cancelled&limit=2&starting_after=${cancelled[1]}`,
        `/v1/sdr2hdr/jobs?status=cancelled&limit=2&starting_after=${cancelled[3]}`,
      ]);

      const three = await client.sdr2hdr.jobs.list({ limit: 2 }).toArray({ limit: 3 });
      expect(three.map((job) => job.job_id)).toEqual([queued.job_id, ...cancelled.slice(0, 2)]);
      // The ledger pages the same way: a grant, then an authorise and a release per cancelled job, one hold open.
      const ledger = await client.account.ledger({ limit: 4 }).toArray();
      expect(ledger).toHaveLength(1 + 5 * 2 + 1);
      await client.sdr2hdr.jobs.cancel(queued.job_id);
    });

    it('jobs.estimate: the price and a yes before paying; the refusal the submit would get when the balance is short', async () => {
      const account = await createAccount(api, { credits: 3 });
      const client = clientFor(account.apiKey);
      const upload = await client.uploads.create(
        await readFile(await sdrMp4({ width: 640, height: 360, seconds: 2 })),
        {
          contentType: 'video/mp4',
        },
      );
      const params = { inputs: [{ upload_id: upload.upload_id }] };
      const yes = await client.sdr2hdr.jobs.estimate(params);
      expect(yes).toMatchObject({ object: 'job_estimate', estimated_credits: 2, accepted: true, error: null });
      expect(yes.estimated_usd).toBe(0.01);
      expect(yes.estimated_seconds).toBeGreaterThan(0);

      const twice = await client.sdr2hdr.jobs.estimate({ inputs: [params.inputs[0], params.inputs[0]] });
      expect(twice).toMatchObject({
        estimated_credits: 4,
        accepted: false,
        error: { code: 'insufficient_credits', details: { required_credits: 4, available_credits: 3 } },
      });
      expect((await client.account.credits()).reserved_credits).toBe(0);
      expect((await client.sdr2hdr.jobs.list()).data).toEqual([]);
    });

    it('withResponse() gives status, request id and rate-limit headers; the logger sees each exchange', async () => {
      const account = await createAccount(api, { plan: 'starter', credits: 5 });
      const lines: { message: string; fields: Record<string, unknown> }[] = [];
      const client = new sdk.MediaJobs({
        apiKey: account.apiKey,
        baseUrl: proxy.url,
        logger: { debug: (message, fields) => lines.push({ message, fields }) },
      });
      const { data, response } = await client.account.credits().withResponse();
      expect(data).toMatchObject({ object: 'credit_balance', balance_credits: 5 });
      expect(response.status).toBe(200);
      expect(response.requestId).toMatch(/^req_/);
      expect(response.rateLimit).toEqual({
        limit: 20,
        remaining: expect.any(Number),
        resetSeconds: expect.any(Number),
      });
      expect(response.rateLimit.remaining).toBeLessThan(20);
      expect(lines).toEqual([
        {
          message: 'mediajobs response',
          fields: expect.objectContaining({
            method: 'GET',
            path: '/v1/account/credits',
            status: 200,
            request_id: response.requestId,
          }),
        },
      ]);
      expect(JSON.stringify(lines)).not.toContain(account.apiKey);
    });

    it('a raised error says why it was not retried: not retryable, Retry-After too long', async () => {
      const account = await createAccount(api, { credits: 0 });
      const client = clientFor(account.apiKey);
      const upload = await client.uploads.create(
        await readFile(await sdrMp4({ width: 640, height: 360, seconds: 2 })),
        {
          contentType: 'video/mp4',
        },
      );
      const refused = await rejection(client.sdr2hdr.jobs.create({ inputs: [{ upload_id: upload.upload_id }] }));
      expect(refused).toMatchObject({ code: 'insufficient_credits', retryStopReason: 'not_retryable', attempts: 0 });

      const admin = api.app.get(AdminService);
      await admin.setMaintenance(true, new Date(Date.now() + 600_000).toISOString());
      try {
        const down = await rejection(client.account.credits());
        expect(down).toMatchObject({
          code: 'maintenance_window',
          retryStopReason: 'retry_after_too_long',
          attempts: 0,
        });
        expect(sdk.RETRY_STOP_REASONS[down.retryStopReason as 'retry_after_too_long']).toBe('Retry-After too long');
      } finally {
        await admin.setMaintenance(false);
      }
    });
  });
});
