// The API and a worker, unchanged, through PgBouncer in transaction-pooling mode (Debian's pgbouncer, a
// private one on a loopback port, 5 server connections for ~40 client connections): migrations, the
// money paths (a balance covering exactly N, settlement once, cancel, webhooks, idempotent retry, the
// upload quota's advisory lock), and PgBouncer's connections killed and PgBouncer itself killed and
// restarted mid-run — no job lost, none charged twice. DATABASE_POOL_MODE=transaction is what the
// operator sets (docs/configuration.md).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { MIGRATIONS, MIGRATIONS_TRANSACTION_MODE } from '../../migrations';
import { AdminService } from '../../src/admin/admin.service';
import { HoldsRepository } from '../../src/billing/holds.repository';
import { call, type TestApi } from '../support/app';
import { createAccountOnPlan } from '../support/chaos-accounts';
import { expectError } from '../support/error-checks';
import { adminQuery } from '../support/global-setup';
import { upload, waitForJob } from '../support/jobs';
import { PrivatePgBouncer } from '../support/pgbouncer';
import { auditMoney, sleep } from '../support/processes';
import {
  deleteRegisteredEndpoints,
  registerEndpoint,
  startReceiver,
  verify,
  type Receiver,
} from '../support/webhook-receiver';
import { startStack } from '../support/worker';
import { clipOfDuration, sdrMp4 } from '../fixtures/media';

const REGION = 'pgbouncer';
const POOL_SIZE = 5;
const MiB = 1024 * 1024;
const UNLIMITED = { requestsPerSecond: 100_000, concurrentJobs: 100_000, processingMinutesPerMonth: null };

describe('through PgBouncer in transaction-pooling mode', () => {
  const database = process.env.TEST_DATABASE!;
  let bouncer: PrivatePgBouncer;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let hook: Receiver;

  beforeAll(async () => {
    bouncer = await PrivatePgBouncer.start({ poolSize: POOL_SIZE });
    stack = await startStack({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-pgb-storage-')),
      DATABASE_URL: bouncer.url(database),
      DATABASE_POOL_MODE: 'transaction',
      WORKER_CONCURRENCY: '2',
    });
    api = stack.api;
    hook = await startReceiver();
  });
  afterAll(async () => {
    await deleteRegisteredEndpoints(api).catch(() => undefined);
    await stack?.close();
    await hook?.stop();
    await bouncer?.dispose();
  });

  /** The API's own view of the server side: every one of its statements passed through PgBouncer. */
  async function pooledThrough(): Promise<number> {
    const [{ port }] = await api.app.get(DataSource).query(`SELECT inet_client_port() AS port`);
    const servers = await bouncer.admin('SHOW SERVERS');
    return servers.filter((server) => server.database === database && Number(server.local_port) === port).length;
  }

  it('runs the migrations through it, on a fresh database', async () => {
    const name = `${database}_pgbouncer`;
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE "${name}"`);
    const source = new DataSource({
      type: 'postgres',
      url: bouncer.url(name),
      migrations: MIGRATIONS,
      migrationsTransactionMode: MIGRATIONS_TRANSACTION_MODE,
    });
    try {
      await source.initialize();
      await source.runMigrations();
      const [{ applied }] = await source.query('SELECT count(*)::int AS applied FROM migrations');
      expect(applied).toBe(MIGRATIONS.length);
    } finally {
      await source.destroy().catch(() => undefined);
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  });

  it('the API reaches PostgreSQL only through PgBouncer’s few server connections', async () => {
    expect(await pooledThrough()).toBe(1);
    expect(await bouncer.serverConnections(database)).toBeLessThanOrEqual(POOL_SIZE);
  });

  it('concurrent submits against a balance covering exactly 4 jobs: 4 accepted, each settled once, the rest 402', async () => {
    const account = await createAccountOnPlan(api, UNLIMITED);
    const key = account.apiKey;
    const endpoint = await registerEndpoint(api, key, hook.url(`/money-${account.accountId}`), ['job.succeeded']);
    const uploadId = await upload(api, key, await clipOfDuration(2));
    const quote = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body: { inputs: [{ upload_id: uploadId }] } });
    expectError(api, quote, 'insufficient_credits', null);
    const cost = quote.body.error.details.required_credits as number;
    const granted = cost * 4 + cost - 1;
    await api.app.get(AdminService).grantCredits(account.accountId, granted, 'four jobs and change');

    // 40 clients at once, each with its own Idempotency-Key, each sending its submit twice (a retry).
    const submit = (index: number) =>
      call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key,
        body: { inputs: [{ upload_id: uploadId }] },
        headers: { 'idempotency-key': `pgb-${account.accountId}-${index}` },
      });
    const first = await Promise.all(Array.from({ length: 40 }, (_, index) => submit(index)));
    const accepted = first.filter((response) => response.status === 202);
    expect(accepted).toHaveLength(4);
    for (const refused of first.filter((response) => response.status !== 202)) {
      expectError(api, refused, 'insufficient_credits', null);
      expect(refused.body.error.details).toEqual({ required_credits: cost, available_credits: cost - 1 });
    }
    const retries = await Promise.all(
      first.map((response, index) => (response.status === 202 ? submit(index) : Promise.resolve(null))),
    );
    for (const [index, retry] of retries.entries()) {
      if (!retry) continue;
      expect(retry.status).toBe(202);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.job_id).toBe(first[index].body.job_id);
    }

    const jobs = await Promise.all(
      accepted.map((response) => waitForJob(api, key, `/v1/sdr2hdr/jobs/${response.body.job_id}`)),
    );
    expect(jobs.map((job) => job.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    const money = await auditMoney(api, key, jobs, granted);
    expect(money.problems).toEqual([]);
    expect(money.chargedTotal).toBe(cost * 4);

    // One signed job.succeeded per job, none twice.
    const deliveries = await hook.waitFor(4, { path: `/money-${account.accountId}` });
    await sleep(500);
    const events = hook.received
      .filter((request) => request.path === `/money-${account.accountId}`)
      .map((request) => verify(endpoint.secret, request));
    expect(deliveries).toHaveLength(4);
    expect(events.map((event) => (event.data as { job: { job_id: string } }).job.job_id).sort()).toEqual(
      jobs.map((job) => job.job_id).sort(),
    );
  });

  it('a cancel releases the hold: cancelled, charged 0', async () => {
    const account = await createAccountOnPlan(api, UNLIMITED, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await clipOfDuration(30));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const path = `/v1/sdr2hdr/jobs/${submitted.body.job_id}`;
    const cancelled = await call(api, 'POST', `${path}/cancel`, { key: account.apiKey });
    expect(cancelled.status).toBe(200);
    const job = await waitForJob(api, account.apiKey, path);
    expect(job.status).toBe('cancelled');
    expect((await auditMoney(api, account.apiKey, [job], 1000)).problems).toEqual([]);
  });

  it('two uploads at once that fit only one at a time (the quota’s advisory transaction lock): one kept', async () => {
    for (let round = 0; round < 3; round++) {
      const account = await createAccountOnPlan(api, { ...UNLIMITED, uploadStorageBytes: 5 * MiB });
      const send = (fill: number) =>
        call(api, 'POST', '/v1/uploads', {
          key: account.apiKey,
          rawBody: Buffer.alloc(3 * MiB, fill),
          headers: { 'content-type': 'video/mp4' },
        });
      const answers = await Promise.all([send(1), send(2), send(3)]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 429, 429]);
      const [held] = await api.app
        .get(DataSource)
        .query(`SELECT count(*)::int AS uploads FROM uploads WHERE account_id = $1`, [account.accountId]);
      expect(held.uploads).toBe(1);
    }
  });

  it('PgBouncer’s connections killed, then PgBouncer killed and restarted, mid-run: no job lost or charged twice', async () => {
    const account = await createAccountOnPlan(api, UNLIMITED, { credits: 10_000 });
    const key = account.apiKey;
    const uploadId = await upload(api, key, await sdrMp4({ seconds: 2 }));
    const submitted: string[] = [];
    const submitSome = async (count: number) => {
      for (let index = 0; index < count; index++) {
        const headers = { 'idempotency-key': `fail-${account.accountId}-${submitted.length}-${index}` };
        for (let attempt = 0; ; attempt++) {
          const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
            key,
            body: { inputs: [{ upload_id: uploadId }] },
            headers,
          });
          if (response.status === 202) {
            submitted.push(response.body.job_id as string);
            break;
          }
          // While PgBouncer is away the API sheds the submit as retryable; a client tries again.
          expect(response.body?.error?.retryable).toBe(true);
          if (attempt > 50) throw new Error(`submit kept failing: ${JSON.stringify(response.body)}`);
          await sleep(200);
        }
      }
    };

    await submitSome(4);
    // Every client and server connection of the database dropped, as a pooler failover does.
    await bouncer.admin(`KILL "${database}"`);
    await bouncer.admin(`RESUME "${database}"`);
    await submitSome(2);
    await sleep(1000);
    await bouncer.kill();
    await sleep(1500);
    await bouncer.start();
    await submitSome(2);

    const jobs = await Promise.all(
      submitted.map((id) => waitForJob(api, key, `/v1/sdr2hdr/jobs/${id}`, undefined, 120_000)),
    );
    expect(new Set(jobs.map((job) => job.job_id)).size).toBe(8);
    expect(jobs.every((job) => job.status === 'succeeded')).toBe(true);
    const money = await auditMoney(api, key, jobs, 10_000);
    expect(money.problems).toEqual([]);
    const [{ count }] = await api.app
      .get(DataSource)
      .query(`SELECT count(*)::int AS count FROM jobs WHERE account_id = $1`, [account.accountId]);
    expect(count).toBe(8);
  }, 240_000);

  it('a submit that failed while PgBouncer was away left its Idempotency-Key free: the client’s retry runs, not 409 for a minute', async () => {
    const account = await createAccountOnPlan(api, UNLIMITED, { credits: 1000 });
    const key = account.apiKey;
    const body = { inputs: [{ upload_id: await upload(api, key, await clipOfDuration(2)) }] };
    const headers = { 'idempotency-key': `away-${account.accountId}` };
    // Another submit's transaction holds the account's row (its lock, taken outside PgBouncer): this
    // submit claims its key, then waits for the account.
    const holder = new Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${database}` });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      const onHolder = { query: async (sql: string, params: unknown[]) => (await holder.query(sql, params)).rows };
      await new HoldsRepository().lockAccounts(onHolder as unknown as EntityManager, [account.accountId]);
      let answered: unknown;
      const first = call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body, headers });
      void first.then((response) => (answered = response));
      for (let waited = 0; ; waited += 50) {
        if (answered) throw new Error(`the submit answered before waiting: ${JSON.stringify(answered)}`);
        const { rows } = await holder.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = $1 AND wait_event_type = 'Lock'`,
          [database],
        );
        if (rows[0].waiting > 0) break;
        if (waited > 20_000) throw new Error('the submit never waited on the account lock');
        await sleep(50);
      }
      // PgBouncer dies under the waiting submit, and stays away a moment: its answer is a retryable 503,
      // and the key's release cannot reach the database just then.
      await bouncer.kill();
      const failed = await first;
      expectError(api, failed, 'service_unavailable');
      await sleep(1000);
      await bouncer.start();
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }

    // The client retries like the SDK; within a few seconds its submit runs (a claim counts as
    // abandoned only after 60 s, so a lost release would answer 409 resource_locked until then).
    const deadline = Date.now() + 15_000;
    let answer = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body, headers });
    while (answer.status !== 202 && answer.body?.error?.retryable === true && Date.now() < deadline) {
      await sleep(300);
      answer = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body, headers });
    }
    expect(answer.status).toBe(202);
    const [{ jobs }] = await api.app
      .get(DataSource)
      .query(`SELECT count(*)::int AS jobs FROM jobs WHERE account_id = $1`, [account.accountId]);
    expect(jobs).toBe(1);
  }, 120_000);

  it('no session setting is left on a server connection: every one commits synchronously (money is durable)', async () => {
    // The async-commit pools set synchronous_commit per transaction here (SET LOCAL), never per session:
    // a session setting would stay on the server connection and reach other clients' money transactions.
    const db = api.app.get(DataSource);
    const seen = await Promise.all(
      Array.from({ length: 3 * POOL_SIZE }, () =>
        db.transaction(async (manager) => {
          const [{ synchronous_commit }] = await manager.query('SHOW synchronous_commit');
          await manager.query('SELECT pg_sleep(0.05)');
          return synchronous_commit as string;
        }),
      ),
    );
    expect(new Set(seen)).toEqual(new Set(['on']));
  });
});
