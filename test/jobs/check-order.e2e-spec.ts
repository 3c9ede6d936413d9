// Which error wins when several things are wrong at once (docs/api-decisions.md §2). One submit is made wrong in
// every way, then the causes are removed one at a time, first to last: each answer must name the
// earliest cause still present. The map of where each step lives is in src/auth/access.guard.ts.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AdminService } from '../../src/admin/admin.service';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { countUsageAgain } from '../support/usage-days';
import { sdrMp4 } from '../fixtures/media';
import { alignToSecond } from '../support/error-checks';

// No worker serves these regions: heartbeats are written by hand, so 'order' counts as healthy and
// 'nowhere' does not.
const REGION = 'order';

describe('order of checks at submit (docs/api-decisions.md §2)', () => {
  let api: TestApi;
  let db: DataSource;
  let admin: AdminService;
  let account: TestAccount;
  let uploadId: string;

  beforeAll(async () => {
    api = await startApi({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-order-')),
      MAX_QUEUE_DEPTH: '1',
    });
    db = api.app.get(DataSource);
    admin = api.app.get(AdminService);
    const redis = new (await import('ioredis')).Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${REGION}`, Date.now() + 3600_000, 'test-heartbeat');
    redis.disconnect();
    // starter: 20 requests/s, 3 concurrent jobs, 600 minutes a month, sdr2hdr and audio, up to 1080p.
    account = await createAccount(api, { plan: 'starter' });
    uploadId = await upload(api, account.apiKey, await sdrMp4());
  });
  afterAll(async () => {
    await admin.setMaintenance(false);
    await api.close();
  });

  /** A job row made by hand (no hold: 0 credits), to fill a limit. */
  async function fakeJob(accountId: string, status: 'queued' | 'succeeded', region: string, seconds = 0) {
    const id = `job_fake${Math.random().toString(36).slice(2, 12)}`;
    await db.query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits, billing_state,
                         processed_seconds, request_id, finished_at)
       VALUES ($1, $2, 'sdr2hdr', $3, $4, '{}', 0, 0, $5, $6, 'req_fake', CASE WHEN $3 = 'succeeded' THEN now() END)`,
      [id, accountId, status, region, status === 'queued' ? 'authorised' : 'settled', seconds],
    );
    await countUsageAgain(db, accountId);
    return id;
  }

  function submit(key: string | undefined, body: unknown, headers: Record<string, string> = {}) {
    return call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body, headers });
  }

  it('each cause is answered only once every earlier one is gone', async () => {
    const valid = { inputs: [{ upload_id: uploadId }] };
    const unknownUpload = { inputs: [{ upload_id: 'upl_0123456789abcdefghij' }] };
    const errorOf = async (response: Promise<{ status: number; body: any }>) => {
      const { status, body } = await response;
      return { status, code: body?.error?.code ?? null, param: body?.error?.param ?? null };
    };
    const scopedKey = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['account'] },
    });
    expect(scopedKey.status).toBe(201);

    // Everything wrong from step 4 onwards: the shape, the subscription, the source, every limit.
    await admin.patchAccount(account.accountId, { subscription_status: 'inactive', spend_limit_usd: 0 });
    const quotaFill = await fakeJob(account.accountId, 'succeeded', 'elsewhere', 600 * 60);
    const running = [
      await fakeJob(account.accountId, 'queued', 'elsewhere'),
      await fakeJob(account.accountId, 'queued', 'elsewhere'),
      await fakeJob(account.accountId, 'queued', 'elsewhere'),
    ];
    const other = await createAccount(api, { plan: 'starter' });
    const queueFill = await fakeJob(other.accountId, 'queued', REGION);
    await admin.setMaintenance(true);
    const shapeless = { inputs: 'not a list', region: 'nowhere' };

    // 1. authentication, then authorisation.
    expect(await errorOf(submit(undefined, shapeless))).toMatchObject({ status: 401, code: 'missing_api_key' });
    expect(await errorOf(submit('mjk_not_a_key', shapeless))).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(await errorOf(submit(scopedKey.body.key, shapeless))).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
    });

    // 2. the request rate beats maintenance: over 20 requests in one second some are 429, the rest 503.
    // The burst starts with a fresh 1-second window, so on a loaded machine it does not straddle two.
    await alignToSecond();
    const burst = await Promise.all(Array.from({ length: 30 }, () => errorOf(submit(account.apiKey, shapeless))));
    expect(new Set(burst.map((answer) => answer.code))).toEqual(new Set(['rate_limit_exceeded', 'maintenance_window']));
    await new Promise((resolve) => setTimeout(resolve, 1100));

    // 3. maintenance beats the shape.
    expect(await errorOf(submit(account.apiKey, shapeless))).toMatchObject({ status: 503, code: 'maintenance_window' });
    await admin.setMaintenance(false);

    // 4. the shape beats the region's health (the region is named in the body).
    expect(await errorOf(submit(account.apiKey, shapeless))).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
      param: 'inputs',
    });
    // 3, region health: once the body is well formed.
    expect(await errorOf(submit(account.apiKey, { ...unknownUpload, region: 'nowhere' }))).toMatchObject({
      status: 503,
      code: 'region_unavailable',
      param: 'region',
    });

    // 5. a stored answer for the Idempotency-Key beats everything after it: another body is a conflict.
    const idempotent = { 'idempotency-key': `order-${Date.now()}` };
    expect(await errorOf(submit(account.apiKey, unknownUpload, idempotent))).toMatchObject({
      status: 402,
      code: 'subscription_inactive',
    });
    expect(await errorOf(submit(account.apiKey, { ...valid, region: 'nowhere' }, idempotent))).toMatchObject({
      status: 409,
      code: 'idempotency_conflict',
    });

    // 6. the account's state and plan beat the source.
    expect(await errorOf(submit(account.apiKey, unknownUpload))).toMatchObject({
      status: 402,
      code: 'subscription_inactive',
    });
    await admin.patchAccount(account.accountId, { subscription_status: 'active' });
    expect(await errorOf(submit(account.apiKey, { ...unknownUpload, output: { resolution: '2160p' } }))).toMatchObject({
      status: 402,
      code: 'plan_not_supported',
      param: 'output.resolution',
    });

    // 7. the source beats every limit.
    expect(await errorOf(submit(account.apiKey, unknownUpload))).toMatchObject({
      status: 404,
      code: 'asset_not_found',
      param: 'inputs[0].upload_id',
    });

    // 8. quota, then concurrency, then the spend cap, then the balance, then the queue's depth.
    expect(await errorOf(submit(account.apiKey, valid))).toMatchObject({ status: 429, code: 'quota_exceeded' });
    await db.query(`DELETE FROM jobs WHERE id = $1`, [quotaFill]);
    await countUsageAgain(db, account.accountId);
    expect(await errorOf(submit(account.apiKey, valid))).toMatchObject({
      status: 429,
      code: 'concurrency_limit_exceeded',
    });
    await db.query(`DELETE FROM jobs WHERE id = ANY($1)`, [running]);
    await countUsageAgain(db, account.accountId);
    expect(await errorOf(submit(account.apiKey, valid))).toMatchObject({ status: 402, code: 'spend_limit_exceeded' });
    await admin.patchAccount(account.accountId, { spend_limit_usd: null });
    expect(await errorOf(submit(account.apiKey, valid))).toMatchObject({ status: 402, code: 'insufficient_credits' });
    await admin.grantCredits(account.accountId, 1000, 'enough');
    expect(await errorOf(submit(account.apiKey, valid))).toMatchObject({ status: 503, code: 'queue_full' });
    await db.query(`DELETE FROM jobs WHERE id = $1`, [queueFill]);

    // Nothing wrong any more; and no refusal above held any credits.
    const accepted = await submit(account.apiKey, valid);
    expect(accepted.status).toBe(202);
    const [{ reserved }] = await db.query(`SELECT reserved_credits::int AS reserved FROM accounts WHERE id = $1`, [
      account.accountId,
    ]);
    expect(reserved).toBe(accepted.body.billing.estimated_credits);
  });
});
