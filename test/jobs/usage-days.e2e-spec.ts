// The balance's "spent" and "minutes used", the 30-day chart, and the spend-cap and quota refusals read
// the per-day usage (account_usage_days) the service keeps beside the ledger and the jobs: after jobs
// that succeed, partly succeed, fail (charged 0), are cancelled, stay open, or were submitted last
// month and end this month, each must say what the sums over credit_ledger and jobs say; the
// migration's backfill must sum rows written before it to the same days; and the retention purge,
// which deletes jobs, must leave this month's numbers as they were.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { backfillAccountUsageDays } from '../../migrations/1765520000000-account-usage-days';
import { runAdminCommand } from '../../src/admin/admin-commands';
import { AdminService } from '../../src/admin/admin.service';
import type { PatchAccountDto } from '../../src/admin/dto/admin.dto';
import { creditsMicroUsd, fromMicroUsd } from '../../src/billing/micro-usd';
import { workersKey } from '../../src/queues/keys';
import { newId } from '../../src/common/ids';
import { LicenseAdminService } from '../../src/license/license-admin.service';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { encryptedMp4, sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { countUsageAgain, usageDaysKept, usageSummedFromRows } from '../support/usage-days';
import { startStack } from '../support/worker';

const REGION = 'usage-days';
// No worker serves this one (its heartbeat is written by hand): its jobs stay queued until cancelled.
const PARKED = 'usage-days-parked';
const PRO_USD_PER_CREDIT = 0.006;
const QUOTA_PLAN = 'usage-days-quota';

describe('usage per day: the balance, the chart and the limits agree with the ledger and the jobs', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let db: DataSource;
  let admin: AdminService;

  beforeAll(async () => {
    stack = await startStack({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-usage-days-')) });
    api = stack.api;
    db = api.app.get(DataSource);
    admin = api.app.get(AdminService);
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(workersKey(api.config, PARKED), Date.now() + 3600_000, 'parked-heartbeat');
    redis.disconnect();
  });
  afterAll(() => stack.close());

  const periodStart = () => {
    const now = new Date();
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  };

  const summedFromRows = (accountId: string, from: Date) => usageSummedFromRows(db, accountId, from);
  const keptDays = (accountId: string, from: Date) => usageDaysKept(db, accountId, from);

  /**
   * What the account sees — its balance, its chart, a spend-cap refusal and a quota refusal — against
   * the sums over its rows. The API rounds (minutes up, USD to cents), so the kept days are compared
   * exactly too.
   */
  async function expectTheSameAsTheRows(account: TestAccount, uploadId: string) {
    const start = periodStart();
    const thirtyDaysAgo = new Date(Date.now() - 29 * 86_400_000);
    const chartFrom = new Date(`${thirtyDaysAgo.toISOString().slice(0, 10)}T00:00:00Z`);
    const earliest = chartFrom < start ? chartFrom : start;
    expect(await keptDays(account.accountId, earliest)).toEqual(await summedFromRows(account.accountId, earliest));

    const month = await summedFromRows(account.accountId, start);
    const captured = month.reduce((sum, day) => sum + day.captured, 0);
    const seconds = month.reduce((sum, day) => sum + day.seconds, 0);
    expect(seconds).toBeGreaterThan(0);

    const balance = (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body;
    expect(balance.spent_usd).toBe(Math.round(captured * PRO_USD_PER_CREDIT * 100) / 100);
    expect(balance.quota.processing_minutes_used).toBe(Math.ceil(seconds / 60));

    const chart = (await call(api, 'GET', '/v1/account/usage?days=30', { key: account.apiKey })).body;
    const charged = await summedFromRows(account.accountId, chartFrom);
    expect(chart.days).toHaveLength(30);
    for (const day of chart.days as { date: string; charged_credits: number }[]) {
      expect(day.charged_credits).toBe(charged.find((summed) => summed.day === day.date)?.captured ?? 0);
    }
    expect(chart.total_charged_credits).toBe(charged.reduce((sum, day) => sum + day.captured, 0));

    const submit = () =>
      call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: { inputs: [{ upload_id: uploadId }] } });
    await admin.patchAccount(account.accountId, { spend_limit_usd: 0 });
    const capped = await submit();
    expect(capped.status).toBe(402);
    expect(capped.body.error).toMatchObject({
      code: 'spend_limit_exceeded',
      details: { spent_usd: fromMicroUsd(creditsMicroUsd(captured, PRO_USD_PER_CREDIT)) },
    });
    await admin.patchAccount(account.accountId, { spend_limit_usd: null });

    // A quota the account has used up: whole minutes below what it used.
    await db.query(`UPDATE plans SET processing_minutes_per_month = $2 WHERE id = $1`, [
      QUOTA_PLAN,
      Math.floor(seconds / 60),
    ]);
    await admin.patchAccount(account.accountId, { plan: QUOTA_PLAN as PatchAccountDto['plan'] });
    const overQuota = await submit();
    expect(overQuota.status).toBe(429);
    expect(overQuota.body.error).toMatchObject({
      code: 'quota_exceeded',
      details: { processing_minutes_used: Math.ceil(seconds / 60) },
    });
    await admin.patchAccount(account.accountId, { plan: 'pro' });
  }

  it('after jobs that succeed, partly succeed, fail, are cancelled, stay open or cross into this month', async () => {
    await db.query(
      `INSERT INTO plans (id, requests_per_second, concurrent_jobs, processing_minutes_per_month, apis, max_output_height,
                          usd_per_credit, webhook_endpoints, upload_storage_bytes, event_streams)
       SELECT $1, requests_per_second, concurrent_jobs, 0, apis, max_output_height, usd_per_credit, webhook_endpoints,
              upload_storage_bytes, event_streams
         FROM plans WHERE id = 'pro'`,
      [QUOTA_PLAN],
    );
    const account = await createAccount(api, { plan: 'pro', credits: 100_000 });
    const good = await upload(api, account.apiKey, await sdrMp4());
    const longer = await upload(api, account.apiKey, await sdrMp4({ seconds: 3 }));
    const bad = await upload(api, account.apiKey, await encryptedMp4());
    const submit = (inputs: string[], region = REGION) =>
      call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: inputs.map((upload_id) => ({ upload_id })), region },
      });

    const processed = [await submit([good]), await submit([longer]), await submit([bad]), await submit([good, bad])];
    const open = [await submit([good], PARKED), await submit([longer], PARKED), await submit([good], PARKED)];
    for (const response of [...processed, ...open]) expect(response.status).toBe(202);
    const ended = [];
    for (const response of processed) {
      ended.push(await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${response.body.job_id}`));
    }
    expect(ended.map((job) => job.status)).toEqual(['succeeded', 'succeeded', 'failed', 'partially_succeeded']);
    expect(ended[2].billing.charged_credits).toBe(0);
    const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${open[0].body.job_id}/cancel`, {
      key: account.apiKey,
    });
    expect(cancelled.status).toBe(200);

    // Every write so far went through the service.
    await expectTheSameAsTheRows(account, good);

    // A job submitted in the last minute of last month (moved there, and its day summed again as the
    // migration sums rows written before it), cancelled now: its seconds leave last month's day, and
    // this month's minutes stay as they are.
    const crossing = open[2].body.job_id as string;
    await db.query(`UPDATE jobs SET created_at = $2 WHERE id = $1`, [
      crossing,
      new Date(periodStart().getTime() - 60_000),
    ]);
    await countUsageAgain(db, account.accountId);
    const before = await summedFromRows(account.accountId, periodStart());
    const cancelledLate = await call(api, 'POST', `/v1/sdr2hdr/jobs/${crossing}/cancel`, { key: account.apiKey });
    expect(cancelledLate.status).toBe(200);
    expect(await summedFromRows(account.accountId, periodStart())).toEqual(before);
    await expectTheSameAsTheRows(account, good);
  });

  it("the migration's backfill sums rows written before it to their days, within its window only", async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const day = 86_400_000;
    const at = (daysAgo: number, hour: number) => {
      const today = new Date();
      return new Date(
        Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - daysAgo * day + hour * 3600_000,
      );
    };
    // Captures on both sides of a UTC midnight, and one 120 days ago (before the backfill's 90 days).
    for (const [credits, createdAt] of [
      [7, at(3, 23.99)],
      [11, at(2, 0.01)],
      [13, at(2, 12)],
      [17, at(120, 12)],
    ] as const) {
      await db.query(
        `INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, balance_after, reserved_after, created_at)
         VALUES ($1, $2, 'capture', $3, $4, 0, 0, $5)`,
        [newId('led'), account.accountId, credits, newId('job'), createdAt],
      );
    }
    await db.query(
      `INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, balance_after, reserved_after, created_at)
       VALUES ($1, $2, 'release', 5, $3, 0, 0, $4)`,
      [newId('led'), account.accountId, newId('job'), at(2, 12)],
    );
    // Jobs: an ended one (processed seconds count), an open one (its estimate), a cancelled one (0).
    for (const [status, estimated, processedSeconds, createdAt] of [
      ['succeeded', 40, 37.125, at(3, 23.99)],
      ['processing', 25.5, 0, at(2, 0.01)],
      ['cancelled', 30, 0, at(2, 6)],
      ['succeeded', 99, 98, at(120, 6)],
    ] as const) {
      await db.query(
        `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits, billing_state,
                           estimated_seconds, processed_seconds, request_id, created_at, finished_at)
         VALUES ($1, $2, 'sdr2hdr', $3, 'nowhere', '{}', 0, 0, $4, $5, $6, 'req_backfill', $7,
                 CASE WHEN $3 IN ('succeeded', 'cancelled') THEN $7::timestamptz END)`,
        [
          newId('job'),
          account.accountId,
          status,
          { succeeded: 'settled', processing: 'authorised', cancelled: 'released' }[status],
          estimated,
          processedSeconds,
          createdAt,
        ],
      );
    }
    // What the service wrote for this account so far goes (a database from before the table).
    await db.query(`DELETE FROM account_usage_days WHERE account_id = $1`, [account.accountId]);

    const runner = db.createQueryRunner();
    await backfillAccountUsageDays((text, params) => runner.query(text, params)).finally(() => runner.release());

    const windowStart = at(89, 0) < new Date(periodStart()) ? at(89, 0) : periodStart();
    const kept = await keptDays(account.accountId, at(365, 0));
    expect(kept).toEqual(await summedFromRows(account.accountId, windowStart));
    expect(kept).toEqual([
      { day: at(3, 0).toISOString().slice(0, 10), captured: 7, seconds: 37.125 },
      { day: at(2, 0).toISOString().slice(0, 10), captured: 24, seconds: 25.5 },
    ]);
    // Run again, by the operator's command (after an old version's writes; an interrupted migration
    // runs it again too): the same, not doubled.
    expect(
      await runAdminCommand(admin, api.app.get(LicenseAdminService), ['rebuild-usage-days', account.accountId]),
    ).toEqual({ object: 'usage_days_rebuilt', accounts: 1 });
    expect(await keptDays(account.accountId, at(365, 0))).toEqual(kept);
    // The balance reads them: this month's part of those charges.
    const thisMonth = kept.filter((entry) => entry.day >= periodStart().toISOString().slice(0, 10));
    const balance = (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body;
    expect(balance.spent_usd).toBe(
      Math.round(thisMonth.reduce((sum, entry) => sum + entry.captured, 0) * PRO_USD_PER_CREDIT * 100) / 100,
    );
    expect(balance.quota.processing_minutes_used).toBe(
      Math.ceil(thisMonth.reduce((sum, entry) => sum + entry.seconds, 0) / 60),
    );
  });

  it("the retention purge deletes an aged-out job of this month, and this month's minutes and charges keep it", async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ seconds: 2 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job.status).toBe('succeeded');
    const before = (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body;
    expect(before.quota.processing_minutes_used).toBeGreaterThan(0);
    expect(before.spent_usd).toBeGreaterThan(0);

    // Past JOB_RETENTION_DAYS (30) as far as the purge can tell, though created this month.
    await db.query(`UPDATE jobs SET finished_at = now() - interval '31 days' WHERE id = $1`, [job.job_id]);
    const purged = await stack.worker.app.get(RetentionPurge).purge();
    expect(purged.jobs.done).toBeGreaterThan(0);
    const [{ count }] = await db.query('SELECT count(*)::int AS count FROM jobs WHERE id = $1', [job.job_id]);
    expect(count).toBe(0);

    const after = (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body;
    expect(after.quota).toEqual(before.quota);
    expect(after.spent_usd).toBe(before.spent_usd);
  });
});
