// An account's open jobs (accounts.open_jobs): the number the concurrency limit compares and the
// balance shows as running_jobs, kept with each job's credit hold (src/billing/holds.repository.ts: taken at the
// submit, settled at the ending) instead of counted on each request. What a client sees of it, the count under concurrent submits and cancels,
// and the migration and the operator's command that count it from the jobs. Endings by a worker (an
// item's last settlement, failures, the reconciler) are checked by the chaos runs' money audit
// (test/support/processes.ts: running_jobs is 0 once every job has ended).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { runAdminCommand } from '../../src/admin/admin-commands';
import { AdminService } from '../../src/admin/admin.service';
import { LicenseAdminService } from '../../src/license/license-admin.service';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';
import { upload } from '../support/jobs';
import { databaseBeforeMigration } from '../support/private-database';
import { sdrMp4 } from '../fixtures/media';

// No worker serves this region (its heartbeat is written by hand): a job stays queued until cancelled.
const REGION = 'openjobs';

describe('the count of open jobs', () => {
  let api: TestApi;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-open-jobs-')) });
    db = api.app.get(DataSource);
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${REGION}`, Date.now() + 3600_000, 'test-heartbeat');
    redis.disconnect();
  });
  afterAll(() => api.close());

  const submit = (account: TestAccount, uploadId: string) =>
    call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: { inputs: [{ upload_id: uploadId }] } });
  const cancel = (account: TestAccount, jobId: string) =>
    call(api, 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, { key: account.apiKey });
  const runningJobs = async (account: TestAccount): Promise<number> =>
    (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body.running_jobs;
  /** The account's open jobs counted in the jobs table, and as kept. */
  const counts = async (account: TestAccount): Promise<{ counted: number; kept: number }> => {
    const [found] = await db.query(
      `SELECT (SELECT count(*)::int FROM jobs WHERE account_id = $1 AND status IN ('queued', 'processing')) AS counted,
              (SELECT open_jobs FROM accounts WHERE id = $1) AS kept`,
      [account.accountId],
    );
    return found;
  };

  it("a submit takes a slot, a cancel gives it back, and the limit refuses at exactly the plan's number", async () => {
    // starter: 3 concurrent jobs.
    const account = await createAccount(api, { plan: 'starter', credits: 10_000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    const jobIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await submit(account, uploadId);
      expect(response.status).toBe(202);
      jobIds.push(response.body.job_id);
      expect(await runningJobs(account)).toBe(i + 1);
    }
    const refused = await submit(account, uploadId);
    expectError(api, refused, 'concurrency_limit_exceeded', null);
    expect(refused.body.error.details).toEqual({ concurrency_limit: 3, running_jobs: 3 });

    expect((await cancel(account, jobIds[1])).status).toBe(200);
    expect(await runningJobs(account)).toBe(2);
    // A second cancel of the same job ends nothing: the slot is not given back twice.
    await cancel(account, jobIds[1]);
    expect(await runningJobs(account)).toBe(2);
    expect((await submit(account, uploadId)).status).toBe(202);
    expect(await runningJobs(account)).toBe(3);
    expect(await counts(account)).toEqual({ counted: 3, kept: 3 });
  });

  it('concurrent submits and cancels of one account leave the count equal to its open jobs', async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: 1_000_000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    const first = await Promise.all(Array.from({ length: 8 }, () => submit(account, uploadId)));
    const accepted = first.filter((response) => response.status === 202).map((response) => response.body.job_id);
    expect(accepted.length).toBeGreaterThan(0);
    // Cancels of half of them race a second wave of submits and repeated cancels.
    await Promise.all([
      ...accepted
        .slice(0, Math.ceil(accepted.length / 2))
        .flatMap((jobId) => [cancel(account, jobId), cancel(account, jobId)]),
      ...Array.from({ length: 8 }, () => submit(account, uploadId)),
    ]);
    const { counted, kept } = await counts(account);
    expect(kept).toBe(counted);
    expect(await runningJobs(account)).toBe(counted);
  });

  it('recount-open-jobs counts a number that went wrong (an old version served beside the new) again from the jobs', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    for (let i = 0; i < 2; i++) expect((await submit(account, uploadId)).status).toBe(202);
    // An old version opened one job and ended none: the kept number is one short; and another account's is too high.
    const other = await createAccount(api, { plan: 'pro' });
    await db.query(`UPDATE accounts SET open_jobs = open_jobs - 1 WHERE id = $1`, [account.accountId]);
    await db.query(`UPDATE accounts SET open_jobs = 5 WHERE id = $1`, [other.accountId]);
    expect(await runningJobs(account)).toBe(1);

    const admin = api.app.get(AdminService);
    const licenses = api.app.get(LicenseAdminService);
    expect(await runAdminCommand(admin, licenses, ['recount-open-jobs', account.accountId])).toEqual({
      object: 'open_jobs_recounted',
      accounts: 1,
    });
    expect(await runningJobs(account)).toBe(2);
    expect(await runningJobs(other)).toBe(5);
    // Every account, run again: exact, not added to.
    const all = (await runAdminCommand(admin, licenses, ['recount-open-jobs'])) as { accounts: number };
    expect(all.accounts).toBeGreaterThanOrEqual(2);
    expect(await runningJobs(account)).toBe(2);
    expect(await runningJobs(other)).toBe(0);
  });
});

describe('the open-jobs migration', () => {
  it('adds the column and counts the open jobs of a database from before it', async () => {
    const { source, close } = await databaseBeforeMigration('open_jobs_migration', 'AccountOpenJobs1765530000000');
    try {
      // 1,200 accounts (more than one batch), every third with jobs: 2 queued, 1 processing, 3 ended.
      await source.query(
        `INSERT INTO accounts (id, name, plan_id) SELECT 'acct_mig' || lpad(n::text, 5, '0'), 'm', 'pro' FROM generate_series(1, 1200) n`,
      );
      await source.query(
        `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits,
                           billing_state, processed_seconds, request_id, finished_at)
         SELECT 'job_mig' || a || '_' || k, 'acct_mig' || lpad(a::text, 5, '0'), 'sdr2hdr', s.status, 'r', '{}', 0, 0,
                CASE s.status WHEN 'succeeded' THEN 'settled' WHEN 'queued' THEN 'authorised' WHEN 'processing' THEN 'authorised' ELSE 'released' END, 0, 'req_mig',
                CASE WHEN s.status IN ('queued', 'processing') THEN NULL ELSE now() END
           FROM generate_series(3, 1200, 3) a,
                unnest('{queued,queued,processing,succeeded,failed,cancelled}'::text[]) WITH ORDINALITY AS s(status, k)`,
      );
      await source.runMigrations({ transaction: 'each' });
      const kept: { open_jobs: number; n: string }[] = await source.query(
        `SELECT open_jobs, count(*) AS n FROM accounts WHERE id LIKE 'acct_mig%' GROUP BY open_jobs ORDER BY open_jobs`,
      );
      expect(kept).toEqual([
        { open_jobs: 0, n: '800' },
        { open_jobs: 3, n: '400' },
      ]);
    } finally {
      await close();
    }
  });
});
