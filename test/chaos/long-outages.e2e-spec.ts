// Outages fail no job (issue 12 item 17): PostgreSQL down for 60 s, then Redis unreachable for 60 s,
// each while a worker runs one job and more wait in its queue. Every job still succeeds, charged once.
// The shared servers stay untouched: this file runs its own PostgreSQL cluster (stopped with
// `pg_ctlcluster -m immediate`, a crash) and its own redis-server behind a TCP proxy that is cut (every
// connection reset, new ones refused; Redis keeps its data, so the queue's locks expire meanwhile).
// CHAOS_OUTAGE_SECONDS shortens the outages for a quick local run (same mechanism); 60 by default.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { sdrMp4 } from '../fixtures/media';
import { createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { TcpProxy } from '../support/tcp-proxy';
import {
  auditMoney,
  isTerminal,
  cleanUpEach,
  killAllWorkers,
  logMeasurement,
  pollUntil,
  PrivateCluster,
  PrivateRedis,
  sleep,
  snapshotApp,
  spawnWorker,
  timedCall,
  type WorkerProcess,
} from '../support/processes';

const REGION = 'chaos-long-outage';
const OUTAGE_MS = Number(process.env.CHAOS_OUTAGE_SECONDS ?? 60) * 1000;
const JOBS_PER_OUTAGE = 4;
const GRANT = 10_000;

describe(`outages of ${OUTAGE_MS / 1000} s fail no job`, () => {
  let redis: PrivateRedis | undefined;
  let proxy: TcpProxy | undefined;
  let cluster: PrivateCluster | undefined;
  let api: TestApi | undefined;
  let worker: WorkerProcess | undefined;
  let storage: string | undefined;

  afterAll(() =>
    cleanUpEach([
      () => killAllWorkers(),
      () => api?.close(),
      () => proxy?.close(),
      () => redis?.dispose(),
      () => cluster?.drop(),
      () => (storage ? rm(storage, { recursive: true, force: true }) : undefined),
    ]),
  );

  it('PostgreSQL down, then Redis unreachable, while jobs run and wait: every job succeeds, charged once', async () => {
    const started = Date.now();
    storage = await mkdtemp(join(tmpdir(), 'mj-chaos-long-outage-'));
    const app = await snapshotApp(storage);
    [redis, cluster] = await Promise.all([PrivateRedis.start(), PrivateCluster.create()]);
    proxy = await TcpProxy.start(redis.port);
    const env = {
      REGION,
      STORAGE_DIR: storage,
      DATABASE_URL: cluster.url(),
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    };
    api = await startApi(env);
    worker = spawnWorker(
      {
        ...env,
        PUBLIC_BASE_URL: api.config.publicBaseUrl,
        DOCS_URL: api.config.docsUrl,
        WORKER_CONCURRENCY: '1',
        // The lock of the running job expires during a Redis outage: the job stalls, as when a worker dies.
        WORKER_LOCK_MS: '5000',
        WORKER_RECONCILE_MS: '2000',
        WORKER_STALE_JOB_SECONDS: '10',
      },
      { logFile: join(storage, 'worker.log'), app },
    );
    const account: TestAccount = await createAccount(api, { plan: 'enterprise', credits: GRANT });
    const video = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 320, height: 180, seconds: 3, audio: false }),
    );
    const db = api.app.get(DataSource);

    /** Submits jobs once the region is up; returns their ids when the first one is being processed. */
    async function submitAndWaitForProcessing(): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < JOBS_PER_OUTAGE; i++) {
        const submitted = await pollUntil(
          `submit ${i} accepted`,
          async () => {
            worker!.assertAlive();
            const response = await timedCall(api!.url, 'POST', '/v1/sdr2hdr/jobs', {
              key: account.apiKey,
              body: { inputs: [{ upload_id: video }], output: { resolution: 'source' } },
            });
            return response.status === 202 ? response : undefined;
          },
          60_000,
          250,
        );
        ids.push(submitted.body.job_id as string);
      }
      await pollUntil(
        'a job to be processing',
        async () => {
          const rows: { id: string }[] = await db.query(
            `SELECT id FROM jobs WHERE id = ANY ($1) AND status = 'processing'`,
            [ids],
          );
          return rows.length > 0;
        },
        60_000,
        100,
      );
      return ids;
    }

    async function waitForEnd(ids: string[]): Promise<any[]> {
      return pollUntil(
        'every job to end',
        async () => {
          worker!.assertAlive();
          const views = await Promise.all(
            ids.map(
              async (id) => (await timedCall(api!.url, 'GET', `/v1/sdr2hdr/jobs/${id}`, { key: account.apiKey })).body,
            ),
          );
          return views.every((view) => view && isTerminal(view.status)) ? views : undefined;
        },
        240_000,
        500,
      );
    }

    const summary = (views: any[]) =>
      views.map((view) => `${view.job_id} ${view.status} ${view.error?.code ?? ''}`.trim());
    const succeeded = (views: any[]) => views.map((view) => `${view.job_id} succeeded`);

    // --- PostgreSQL: crashed with one job processing and the others waiting; back after the outage.
    const pgJobs = await submitAndWaitForProcessing();
    const pgQueued: { id: string }[] = await db.query(`SELECT id FROM jobs WHERE id = ANY ($1) AND status = 'queued'`, [
      pgJobs,
    ]);
    await cluster.stop('immediate');
    const pgDownAt = Date.now();
    await sleep(OUTAGE_MS);
    await cluster.start();
    const pgOutageMs = Date.now() - pgDownAt;
    const pgViews = await waitForEnd(pgJobs);
    const pgDrainMs = Date.now() - pgDownAt - pgOutageMs;
    expect(summary(pgViews)).toEqual(succeeded(pgViews));

    // --- Redis: unreachable (connections reset, new ones refused) with one job processing; back after.
    const redisJobs = await submitAndWaitForProcessing();
    await proxy.close();
    const redisDownAt = Date.now();
    await sleep(OUTAGE_MS);
    await proxy.reopen();
    const redisOutageMs = Date.now() - redisDownAt;
    const redisViews = await waitForEnd(redisJobs);
    const redisDrainMs = Date.now() - redisDownAt - redisOutageMs;
    expect(summary(redisViews)).toEqual(succeeded(redisViews));

    // Each job charged once for what it used, no hold left.
    const money = await auditMoney(api, account.apiKey, [...pgViews, ...redisViews], GRANT);
    expect(money.problems).toEqual([]);
    const attempts: { id: string; attempts: number }[] = await db.query(
      `SELECT id, attempts FROM jobs WHERE id = ANY ($1)`,
      [[...pgJobs, ...redisJobs]],
    );
    logMeasurement('long-outages', {
      outage_seconds: OUTAGE_MS / 1000,
      postgres: { outage_ms: pgOutageMs, queued_at_stop: pgQueued.length, drain_after_restart_ms: pgDrainMs },
      redis: { outage_ms: redisOutageMs, drain_after_reopen_ms: redisDrainMs },
      worker_starts_per_job: attempts.map((row) => row.attempts),
      by_status: money.byStatus,
      total_ms: Date.now() - started,
    });
  }, 900_000);
});
