// POST /v1/{api}/jobs/estimate: the submit's body and checks, no hold, no job — the price, the
// processing time, and the verdict a submit would get now (each refusal is the submit's own error).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { AdminService } from '../../src/admin/admin.service';
import { workersKey } from '../../src/queues/keys';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { countUsageAgain } from '../support/usage-days';
import { expectError } from '../support/error-checks';
import { randomBytesFile, sdrMp4, speechWav } from '../fixtures/media';

// No worker consumes this region's queue, so a submitted job stays queued (and counts as running).
const REGION = 'estimate';

describe('POST /v1/{api}/jobs/estimate', () => {
  let api: TestApi;
  let db: DataSource;
  let clipPath: string;

  beforeAll(async () => {
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-estimate-')) });
    db = api.app.get(DataSource);
    await heartbeats(REGION, 1);
    clipPath = await sdrMp4({ width: 640, height: 360, seconds: 2, fps: 30 });
  });
  afterAll(() => api.close());

  /** `count` live workers in `region`: heartbeats an hour ahead, so they stay fresh for the whole file. */
  async function heartbeats(region: string, count: number): Promise<void> {
    const redis = new Redis(api.config.redisUrl);
    for (let n = 0; n < count; n++)
      await redis.zadd(workersKey(api.config, region), Date.now() + 3600_000, `test-${n}`);
    redis.disconnect();
  }

  const body = (uploadId: string, extra: object = {}) => ({ inputs: [{ upload_id: uploadId }], ...extra });
  const estimate = (account: TestAccount, payload: unknown, path = '/v1/sdr2hdr/jobs/estimate') =>
    call(api, 'POST', path, { key: account.apiKey, body: payload });
  const submit = (account: TestAccount, payload: unknown) =>
    call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: payload });

  async function footprint(accountId: string) {
    const [row] = await db.query(
      `SELECT (SELECT count(*)::int FROM jobs WHERE account_id = $1) AS jobs,
              (SELECT count(*)::int FROM credit_ledger WHERE account_id = $1 AND kind <> 'grant') AS movements,
              (SELECT reserved_credits::int FROM accounts WHERE id = $1) AS reserved`,
      [accountId],
    );
    return row as { jobs: number; movements: number; reserved: number };
  }

  it('accepted: per-item and total credits, USD at the plan price, processing time; no job, no hold', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const uploadId = await upload(api, account.apiKey, clipPath);
    const payload = body(uploadId, {
      output: { resolution: '720p' },
      inputs: [{ upload_id: uploadId }, { upload_id: uploadId }],
    });
    const response = await estimate(account, payload);

    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const item = {
      source: { type: 'upload', upload_id: uploadId, filename: null },
      duration_seconds: expect.closeTo(2, 1),
      width: 640,
      height: 360,
      // 720p asked of a 640×360 source: produced at its own size (never upscaled).
      output_width: 640,
      output_height: 360,
      estimated_credits: 2, // 2 s at up to 720p: 1 credit a second
      estimated_usd: 0.01, // pro: 0.006 USD a credit, to the cent
      estimated_seconds: expect.any(Number),
    };
    expect(response.body).toEqual({
      object: 'job_estimate',
      api: 'sdr2hdr',
      region: REGION,
      estimated_credits: 4,
      estimated_usd: 0.02,
      usd_per_credit: 0.006,
      estimated_seconds: expect.any(Number),
      duration_seconds: expect.closeTo(4, 1),
      items: [
        { index: 0, ...item },
        { index: 1, ...item },
      ],
      accepted: true,
      error: null,
    });
    // 2 s of 640×360 at the default preset: docs/media.md's speed (≈ 0.65 s a second) plus the item's overhead.
    expect(response.body.items[0].estimated_seconds).toBe(3);
    expect(response.body.estimated_seconds).toBe(6);
    expect(await footprint(account.accountId)).toEqual({ jobs: 0, movements: 0, reserved: 0 });

    // The estimate is what the submit then holds.
    const submitted = await submit(account, payload);
    expect(submitted.status).toBe(202);
    expect(submitted.body.billing.estimated_credits).toBe(response.body.estimated_credits);
  });

  it("items run in parallel on the region's live workers: the job takes as long as its busiest worker", async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const uploadId = await upload(api, account.apiKey, clipPath);
    await heartbeats('estimate-three', 3);
    await heartbeats('estimate-two', 2);
    const inputs = [{ upload_id: uploadId }, { upload_id: uploadId }, { upload_id: uploadId }];
    const at = async (region: string) => {
      const response = await estimate(account, { inputs, region });
      expect(response.status).toBe(200);
      return response.body as { estimated_seconds: number; items: { estimated_seconds: number }[] };
    };
    const [one, two, three] = await Promise.all([at(REGION), at('estimate-two'), at('estimate-three')]);
    // Each item takes 3 s on a worker, wherever it runs.
    for (const answer of [one, two, three])
      expect(answer.items.map((item) => item.estimated_seconds)).toEqual([3, 3, 3]);
    expect(one.estimated_seconds).toBe(9); // one worker: one after another
    expect(two.estimated_seconds).toBe(6); // two workers: two items at once, then the third
    expect(three.estimated_seconds).toBe(3); // a worker each: the longest item
  });

  it("a long video's segments run on the region's workers too: 10 minutes of 1080p on 4 workers ≈ 3 of its 10 segments", async () => {
    expect(api.config.segmentSeconds).toBe(60); // the default: a 600 s item is cut into 10 segments
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    await heartbeats('estimate-four', 4);
    const inputs = [{ media: { duration_seconds: 600, width: 1920, height: 1080 } }];
    const at = async (region: string) =>
      (await estimate(account, { inputs, region })).body as {
        estimated_seconds: number;
        items: { estimated_seconds: number }[];
      };
    const [one, four] = await Promise.all([at(REGION), at('estimate-four')]);
    // The item's own time is one worker's, wherever it runs.
    expect(four.items[0].estimated_seconds).toBe(one.items[0].estimated_seconds);
    // One worker encodes all ten segments (plus each one's overhead, the split and the join).
    expect(one.estimated_seconds).toBeGreaterThanOrEqual(one.items[0].estimated_seconds);
    expect(one.estimated_seconds).toBeLessThan(one.items[0].estimated_seconds * 1.05);
    // Four workers: the busiest encodes 3 of the 10 segments, then the join.
    expect(four.estimated_seconds / one.estimated_seconds).toBeGreaterThan(0.3);
    expect(four.estimated_seconds / one.estimated_seconds).toBeLessThan(0.35);
  });

  it('output.quality changes the processing time (its encoder preset), not the price', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const uploadId = await upload(api, account.apiKey, clipPath);
    const at = async (quality: string) =>
      (await estimate(account, body(uploadId, { output: { quality } }))).body as {
        estimated_credits: number;
        estimated_seconds: number;
      };
    const [fast, balanced, best] = await Promise.all([at('fast'), at('balanced'), at('best')]);
    expect(new Set([fast.estimated_credits, balanced.estimated_credits, best.estimated_credits])).toEqual(new Set([2]));
    expect(fast.estimated_seconds).toBeLessThan(balanced.estimated_seconds);
    expect(balanced.estimated_seconds).toBeLessThanOrEqual(best.estimated_seconds);
  });

  it('a file not uploaded yet, described as media: priced before any byte is sent; a submit refuses it', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 5 });
    const media = { duration_seconds: 8, width: 1920, height: 1080 };
    const response = await estimate(account, { inputs: [{ media }], output: { resolution: '720p' } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      estimated_credits: 8, // 8 s at 720p
      estimated_usd: 0.05,
      items: [{ index: 0, source: { type: 'declared' }, duration_seconds: 8, width: 1920, height: 1080 }],
      accepted: false,
      error: { code: 'insufficient_credits', details: { required_credits: 8, available_credits: 5 } },
    });
    expectError(
      api,
      await estimate(account, { inputs: [{ media: { duration_seconds: 8, width: 1920 } }] }),
      'missing_parameter',
      'inputs[0].media.height',
    );
    expectError(
      api,
      await estimate(account, {
        inputs: [{ media: { ...media, duration_seconds: api.config.maxDurationSeconds + 1 } }],
      }),
      'duration_exceeded',
      'inputs[0].media',
    );
    expectError(api, await submit(account, { inputs: [{ media }] }), 'invalid_parameter', 'inputs[0].media');
    const audio = await estimate(account, { inputs: [{ media: { duration_seconds: 25 } }] }, '/v1/audio/jobs/estimate');
    expect(audio.body).toMatchObject({ estimated_credits: 3, items: [{ width: null, height: null }], accepted: true });
  });

  it('audio: a credit per started 10 s of speech, at the starter price', async () => {
    const account = await createAccount(api, { plan: 'starter', credits: 100 });
    const uploadId = await upload(api, account.apiKey, await speechWav(), 'audio/wav');
    const response = await estimate(account, body(uploadId), '/v1/audio/jobs/estimate');
    expect(response.status).toBe(200);
    const seconds = response.body.duration_seconds as number;
    expect(response.body).toMatchObject({
      object: 'job_estimate',
      api: 'audio',
      estimated_credits: Math.ceil(seconds / 10),
      usd_per_credit: 0.008,
      accepted: true,
      error: null,
    });
    expect(response.body.estimated_seconds).toBeGreaterThanOrEqual(1);
  });

  it('insufficient credits: not accepted, with the very error object the submit then gets', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1 });
    const uploadId = await upload(api, account.apiKey, clipPath);
    const response = await estimate(account, body(uploadId));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      estimated_credits: 2, // 2 s of 360p: 1 credit a second up to 720p
      accepted: false,
      error: {
        type: 'billing_error',
        code: 'insufficient_credits',
        retryable: false,
        param: null,
        details: { required_credits: 2, available_credits: 1 },
        request_id: response.headers.get('x-request-id'),
        doc_url: `${api.config.docsUrl}/errors.html#insufficient_credits`,
      },
    });
    expect(await footprint(account.accountId)).toEqual({ jobs: 0, movements: 0, reserved: 0 });
    const submitted = await submit(account, body(uploadId));
    expectError(api, submitted, 'insufficient_credits');
    const { request_id: _a, ...estimated } = response.body.error;
    const { request_id: _b, ...refused } = submitted.body.error;
    expect(estimated).toEqual(refused);
  });

  it('spend cap: not accepted, spend_limit_exceeded with the numbers', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    await api.app.get(AdminService).patchAccount(account.accountId, { spend_limit_usd: 0 });
    const response = await estimate(account, body(await upload(api, account.apiKey, clipPath)));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      accepted: false,
      error: { code: 'spend_limit_exceeded', details: { spend_limit_usd: 0, spent_usd: 0 } },
    });
  });

  it('quota: not accepted, quota_exceeded when the period’s minutes are used up', async () => {
    const account = await createAccount(api, { plan: 'free', credits: 1000 });
    await db.query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits, billing_state, processed_seconds, request_id, finished_at)
       VALUES ('job_estfill' || substr(md5(random()::text), 1, 10), $1, 'sdr2hdr', 'succeeded', $2, '{}', 0, 0, 'settled', 3600, 'req_x', now())`,
      [account.accountId, REGION],
    );
    await countUsageAgain(db, account.accountId);
    const response = await estimate(account, body(await upload(api, account.apiKey, clipPath)));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      accepted: false,
      error: { code: 'quota_exceeded', details: { processing_minutes_limit: 60, processing_minutes_used: 60 } },
    });
  });

  it('concurrency: not accepted while the plan’s one job is running; accepted again after it is cancelled', async () => {
    const account = await createAccount(api, { plan: 'free', credits: 1000 });
    const uploadId = await upload(api, account.apiKey, clipPath);
    const first = await submit(account, body(uploadId));
    expect(first.status).toBe(202);
    const response = await estimate(account, body(uploadId));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      accepted: false,
      error: { code: 'concurrency_limit_exceeded', details: { concurrency_limit: 1, running_jobs: 1 } },
    });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the free plan's 5 requests a second
    await call(api, 'POST', `/v1/sdr2hdr/jobs/${first.body.job_id}/cancel`, { key: account.apiKey });
    expect((await estimate(account, body(uploadId))).body).toMatchObject({ accepted: true, error: null });
  });

  it('the submit’s own checks answer as errors: shape, source, scope', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    expectError(api, await estimate(account, { inputs: [] }), 'invalid_parameter', 'inputs');
    expectError(
      api,
      await estimate(account, body(await upload(api, account.apiKey, clipPath), { output: { resolution: '480p' } })),
      'invalid_parameter',
      'output.resolution',
    );
    const junk = await upload(api, account.apiKey, await randomBytesFile());
    const bad = await estimate(account, body(junk));
    expect(bad.status).toBe(await submit(account, body(junk)).then((response) => response.status));
    expect(bad.body.error.param).toBe('inputs[0].upload_id');
    expectError(api, await estimate(account, body('upl_00000000000000000000')), 'asset_not_found');

    const keys = await call(api, 'POST', '/v1/account/api-keys', { key: account.apiKey, body: { scopes: ['audio'] } });
    const audioOnly = { ...account, apiKey: keys.body.key as string };
    expectError(api, await estimate(audioOnly, body(junk)), 'insufficient_scope');
    expect(await footprint(account.accountId)).toEqual({ jobs: 0, movements: 0, reserved: 0 });
  });
});
