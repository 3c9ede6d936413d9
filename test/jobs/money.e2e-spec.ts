// Limits and money under concurrency: holds, the concurrency limit, spend cap, quota, queue depth
// and Idempotency-Key — with many parallel submits against the real Postgres.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AdminService } from '../../src/admin/admin.service';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { countUsageAgain } from '../support/usage-days';
import { startMediaOrigin } from '../support/media-origin';
import { waitUntil } from '../support/error-checks';
import { clipOfDuration, sdrMp4 } from '../fixtures/media';

// No worker consumes this region's queue, so submitted jobs stay queued and keep their holds; the
// heartbeat is written by hand so the region counts as healthy.
const REGION = 'money';

describe('limits and money under concurrency', () => {
  let api: TestApi;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-money-')),
      ALLOW_PRIVATE_URLS: '127.0.0.1',
    });
    db = api.app.get(DataSource);
    const redis = new (await import('ioredis')).Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${REGION}`, Date.now() + 3600_000, 'test-heartbeat');
    redis.disconnect();
  });
  afterAll(() => api.close());

  async function clip(key: string): Promise<string> {
    return upload(api, key, await sdrMp4());
  }

  function submit(key: string, uploadId: string, headers: Record<string, string> = {}, extra: object = {}) {
    return call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key,
      body: { inputs: [{ upload_id: uploadId }], ...extra },
      headers,
    });
  }

  async function accountRow(id: string) {
    const [row] = await db.query('SELECT balance_credits, reserved_credits FROM accounts WHERE id = $1', [id]);
    return { balance: Number(row.balance_credits), reserved: Number(row.reserved_credits) };
  }

  it('many parallel submits against a small balance: exactly what it covers is accepted, never negative', async () => {
    const account = await createAccount(api, { plan: 'enterprise' });
    const uploadId = await clip(account.apiKey);
    const probe = await submit(account.apiKey, uploadId);
    expect(probe.status).toBe(402);
    expect(probe.body.error).toMatchObject({ code: 'insufficient_credits', details: { available_credits: 0 } });
    const cost = probe.body.error.details.required_credits as number;
    await api.app.get(AdminService).grantCredits(account.accountId, cost * 7, 'exactly seven jobs');

    const responses = await Promise.all(Array.from({ length: 40 }, () => submit(account.apiKey, uploadId)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(7);
    for (const response of responses.filter((r) => r.status !== 202)) {
      expect(response.status).toBe(402);
      expect(response.body.error).toMatchObject({ code: 'insufficient_credits', details: { required_credits: cost } });
    }
    const row = await accountRow(account.accountId);
    expect(row).toEqual({ balance: cost * 7, reserved: cost * 7 });
    const [ledger] = await db.query(
      `SELECT SUM(CASE kind WHEN 'grant' THEN credits WHEN 'capture' THEN -credits ELSE 0 END) AS balance,
              SUM(CASE kind WHEN 'authorise' THEN credits WHEN 'capture' THEN -credits WHEN 'release' THEN -credits ELSE 0 END) AS reserved
         FROM credit_ledger WHERE account_id = $1`,
      [account.accountId],
    );
    expect({ balance: Number(ledger.balance), reserved: Number(ledger.reserved) }).toEqual(row);
  });

  it('the database itself refuses a hold beyond the available balance (CHECK constraint)', async () => {
    const account = await createAccount(api, { credits: 5 });
    await expect(
      db.query('UPDATE accounts SET reserved_credits = 6 WHERE id = $1', [account.accountId]),
    ).rejects.toThrow(/accounts_available_not_negative/);
  });

  it('concurrency limit under parallel submits: exactly the plan’s limit is accepted', async () => {
    const account = await createAccount(api, { plan: 'starter', credits: 10_000 }); // 3 concurrent jobs
    const uploadId = await clip(account.apiKey);
    const responses = await Promise.all(Array.from({ length: 12 }, () => submit(account.apiKey, uploadId)));
    expect(responses.filter((response) => response.status === 202)).toHaveLength(3);
    const refused = responses.filter((response) => response.status !== 202);
    for (const response of refused) {
      expect(response.status).toBe(429);
      expect(response.body.error).toMatchObject({
        type: 'rate_limit_error',
        code: 'concurrency_limit_exceeded',
        retryable: true,
        details: { concurrency_limit: 3, running_jobs: 3 },
      });
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('cancelling a queued job releases its hold and frees a concurrency slot', async () => {
    const account = await createAccount(api, { plan: 'free', credits: 100 }); // 1 concurrent job
    const uploadId = await clip(account.apiKey);
    // The free plan also allows only 5 requests a second: pace the calls so that limit never answers.
    const nextWindow = () => new Promise((resolve) => setTimeout(resolve, 1100));
    await nextWindow();
    const first = await submit(account.apiKey, uploadId);
    expect(first.status).toBe(202);
    const second = await submit(account.apiKey, uploadId);
    expect(second.body.error.code).toBe('concurrency_limit_exceeded');
    const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${first.body.job_id}/cancel`, { key: account.apiKey });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      error: { code: 'job_cancelled', type: 'processing_error' },
      billing: { charged_credits: 0, refunded: true, state: 'released' },
    });
    expect(await accountRow(account.accountId)).toEqual({ balance: 100, reserved: 0 });
    const again = await call(api, 'POST', `/v1/sdr2hdr/jobs/${first.body.job_id}/cancel`, { key: account.apiKey });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('job_not_cancellable');
    await nextWindow();
    expect((await submit(account.apiKey, uploadId)).status).toBe(202);
    const [event] = await db.query(`SELECT event, payload FROM outbox_events WHERE job_id = $1`, [first.body.job_id]);
    expect(event.event).toBe('job.cancelled');
    expect(event.payload.data.error).toEqual(cancelled.body.error);
  });

  it('spend cap: 402 spend_limit_exceeded with the numbers', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    await api.app.get(AdminService).patchAccount(account.accountId, { spend_limit_usd: 0 });
    const response = await submit(account.apiKey, await clip(account.apiKey));
    expect(response.status).toBe(402);
    expect(response.body.error).toMatchObject({
      code: 'spend_limit_exceeded',
      retryable: false,
      details: { spend_limit_usd: 0, spent_usd: 0, reset_at: expect.stringMatching(/^\d{4}-\d\d-01T00:00:00.000Z$/) },
    });
  });

  describe('spend cap is a hard ceiling, compared exactly (issue 12 item 3)', () => {
    // pro: $0.006 a credit. A 2 s clip at 320×180 is 2 credits = $0.012; a 1 s clip 1 credit = $0.006.
    async function cappedAccount(capUsd: number) {
      const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
      await api.app.get(AdminService).patchAccount(account.accountId, { spend_limit_usd: capUsd });
      return account;
    }

    it('a $0.01 cap refuses a $0.012 job (no rounding to cents)', async () => {
      const account = await cappedAccount(0.01);
      const uploadId = await upload(api, account.apiKey, await clipOfDuration(2));
      const response = await submit(account.apiKey, uploadId);
      expect(response.status).toBe(402);
      expect(response.body.error).toMatchObject({
        code: 'spend_limit_exceeded',
        details: { spend_limit_usd: 0.01, spent_usd: 0, held_usd: 0, required_usd: 0.012 },
      });
      expect(await accountRow(account.accountId)).toEqual({ balance: 10_000, reserved: 0 });
    });

    it('what is already held counts: two $0.006 jobs do not both fit under a $0.01 cap', async () => {
      const account = await cappedAccount(0.01);
      const uploadId = await clip(account.apiKey);
      const first = await submit(account.apiKey, uploadId);
      expect(first.status).toBe(202);
      expect(first.body.billing.estimated_credits).toBe(1);
      const second = await submit(account.apiKey, uploadId);
      expect(second.status).toBe(402);
      expect(second.body.error).toMatchObject({
        code: 'spend_limit_exceeded',
        details: { spend_limit_usd: 0.01, spent_usd: 0, held_usd: 0.006, required_usd: 0.006 },
      });
      expect(await accountRow(account.accountId)).toEqual({ balance: 10_000, reserved: 1 });
    });

    it('a job that costs exactly the cap is accepted', async () => {
      const account = await cappedAccount(0.03); // 5 credits × $0.006
      const response = await submit(account.apiKey, await upload(api, account.apiKey, await clipOfDuration(5)));
      expect(response.status).toBe(202);
      expect(response.body.billing.estimated_credits).toBe(5);
    });
  });

  it('quota: 429 quota_exceeded when the period’s processing minutes are used up', async () => {
    const account = await createAccount(api, { plan: 'free', credits: 10_000 });
    await db.query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits, billing_state, processed_seconds, request_id, finished_at)
       VALUES ('job_quotafill' || substr(md5(random()::text), 1, 10), $1, 'sdr2hdr', 'succeeded', $2, '{}', 0, 0, 'settled', 3600, 'req_x', now())`,
      [account.accountId, REGION],
    );
    await countUsageAgain(db, account.accountId);
    const response = await submit(account.apiKey, await clip(account.apiKey));
    expect(response.status).toBe(429);
    expect(response.body.error).toMatchObject({
      code: 'quota_exceeded',
      retryable: false,
      details: { processing_minutes_limit: 60, processing_minutes_used: 60 },
    });
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body.quota).toEqual({
      processing_minutes_limit: 60,
      processing_minutes_used: 60,
    });
  });

  describe('Idempotency-Key', () => {
    it('same key and body → the same job again, replayed; different body → idempotency_conflict', async () => {
      const account = await createAccount(api, { credits: 1000 });
      const uploadId = await clip(account.apiKey);
      const headers = { 'idempotency-key': `k-${Date.now()}` };
      const first = await submit(account.apiKey, uploadId, headers);
      expect(first.status).toBe(202);
      const second = await submit(account.apiKey, uploadId, headers);
      expect(second.status).toBe(202);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.headers.get('location')).toBe(first.headers.get('location'));
      expect(second.body).toEqual(first.body);
      const conflict = await submit(account.apiKey, uploadId, headers, { metadata: { other: 'body' } });
      expect(conflict.status).toBe(409);
      expect(conflict.body.error).toMatchObject({
        code: 'idempotency_conflict',
        param: 'Idempotency-Key',
        retryable: false,
      });
      const [{ count }] = await db.query('SELECT count(*)::int AS count FROM jobs WHERE account_id = $1', [
        account.accountId,
      ]);
      expect(count).toBe(1);
    });

    it('concurrent identical requests create one job and one hold', async () => {
      const account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
      const uploadId = await clip(account.apiKey);
      const headers = { 'idempotency-key': `race-${Date.now()}` };
      const responses = await Promise.all(Array.from({ length: 10 }, () => submit(account.apiKey, uploadId, headers)));
      for (const response of responses) {
        expect([202, 409]).toContain(response.status);
        if (response.status === 409)
          expect(response.body.error).toMatchObject({ code: 'resource_locked', retryable: true });
      }
      const [{ jobs }] = await db.query('SELECT count(*)::int AS jobs FROM jobs WHERE account_id = $1', [
        account.accountId,
      ]);
      const [{ holds }] = await db.query(
        `SELECT count(*)::int AS holds FROM credit_ledger WHERE account_id = $1 AND kind = 'authorise'`,
        [account.accountId],
      );
      expect({ jobs, holds }).toEqual({ jobs: 1, holds: 1 });
      const ids = new Set(responses.filter((r) => r.status === 202).map((r) => r.body.job_id));
      expect(ids.size).toBe(1);
    });

    it('validation failures are not stored: the corrected body may reuse the key', async () => {
      const account = await createAccount(api, { credits: 1000 });
      const uploadId = await clip(account.apiKey);
      const headers = { 'idempotency-key': `fix-${Date.now()}` };
      const bad = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: { inputs: [] }, headers });
      expect(bad.status).toBe(400);
      const good = await submit(account.apiKey, uploadId, headers);
      expect(good.status).toBe(202);
      expect(good.headers.get('idempotent-replayed')).toBeNull();
    });

    it('the response is stored by the job’s own transaction: an API dying after the commit cannot make a retry create a second job (issue 12 item 5)', async () => {
      const account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
      const uploadId = await clip(account.apiKey);
      // Stands in for an API process that dies right after the job's commit: PostgreSQL refuses to store
      // this account's response unless the same transaction inserted the job. A response stored after
      // the commit, in a transaction of its own, is then never stored — as when the process died.
      const name = `late_response_${account.accountId.replace(/\W/g, '_')}`;
      await db.query(`
        CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.state = 'done' AND NOT EXISTS (
            SELECT 1 FROM jobs WHERE account_id = NEW.account_id AND xmin::text::bigint = txid_current() % 4294967296
          ) THEN
            RAISE EXCEPTION 'the API died between the job''s commit and storing its response';
          END IF;
          RETURN NEW;
        END $$`);
      await db.query(
        `CREATE TRIGGER ${name} BEFORE UPDATE ON idempotency_keys FOR EACH ROW
           WHEN (NEW.account_id = '${account.accountId}') EXECUTE FUNCTION ${name}()`,
      );
      try {
        const headers = { 'idempotency-key': `crash-${Date.now()}` };
        const first = await submit(account.apiKey, uploadId, headers);
        expect(first.status).toBe(202);
        // The client saw no answer (the process died) and retries after the claim counts as abandoned.
        await db.query(
          `UPDATE idempotency_keys SET created_at = now() - interval '10 minutes' WHERE account_id = $1 AND state = 'in_flight'`,
          [account.accountId],
        );
        const retry = await submit(account.apiKey, uploadId, headers);
        expect(retry.status).toBe(202);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(retry.body.job_id).toBe(first.body.job_id);
        const [{ jobs }] = await db.query('SELECT count(*)::int AS jobs FROM jobs WHERE account_id = $1', [
          account.accountId,
        ]);
        expect(jobs).toBe(1);
      } finally {
        await db.query(`DROP TRIGGER ${name} ON idempotency_keys`);
        await db.query(`DROP FUNCTION ${name}()`);
      }
    });

    it('a retry that takes over a claim that looks abandoned while the first request still runs: one job, one 409 (issue 12 item 5)', async () => {
      const origin = await startMediaOrigin();
      try {
        const account = await createAccount(api, { plan: 'enterprise', credits: 1000 });
        // A slow source keeps the first request busy (probing) long enough to be taken over.
        origin.serve('slow.mp4', await clipOfDuration(1));
        origin.delay('slow.mp4', 1000);
        const send = () =>
          call(api, 'POST', '/v1/sdr2hdr/jobs', {
            key: account.apiKey,
            body: { inputs: [{ source_url: origin.url('slow.mp4') }] },
            headers: { 'idempotency-key': 'takeover' },
          });
        const claimed = async () =>
          (await db.query('SELECT 1 FROM idempotency_keys WHERE account_id = $1', [account.accountId])).length > 0;
        const first = send();
        await waitUntil(claimed, 10_000);
        // The first request's process looks dead (its claim is older than the abandonment limit): a retry takes over.
        await db.query(`UPDATE idempotency_keys SET created_at = now() - interval '10 minutes' WHERE account_id = $1`, [
          account.accountId,
        ]);
        const responses = await Promise.all([first, send()]);
        expect(responses.map((response) => response.status).sort()).toEqual([202, 409]);
        const accepted = responses.find((response) => response.status === 202)!;
        expect(responses.find((response) => response.status === 409)!.body.error).toMatchObject({
          code: 'resource_locked',
          param: 'Idempotency-Key',
          retryable: true,
        });
        const [{ jobs }] = await db.query('SELECT count(*)::int AS jobs FROM jobs WHERE account_id = $1', [
          account.accountId,
        ]);
        expect(jobs).toBe(1);
        const later = await send();
        expect(later.status).toBe(202);
        expect(later.headers.get('idempotent-replayed')).toBe('true');
        expect(later.body.job_id).toBe(accepted.body.job_id);
      } finally {
        await origin.close();
      }
    });

    it('a stored 402 is replayed with this request’s id', async () => {
      const account = await createAccount(api, { credits: 0 });
      const uploadId = await clip(account.apiKey);
      const headers = { 'idempotency-key': `broke-${Date.now()}` };
      const first = await submit(account.apiKey, uploadId, headers);
      expect(first.body.error.code).toBe('insufficient_credits');
      const again = await submit(account.apiKey, uploadId, headers);
      expect(again.status).toBe(402);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.error.request_id).toBe(again.headers.get('x-request-id'));
      expect(again.headers.get('original-request-id')).toBe(first.body.error.request_id);
    });
  });
});
