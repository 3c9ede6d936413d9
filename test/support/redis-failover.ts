// The flow both Redis HA tests share (test/scale/redis-cluster and redis-sentinel): the real API and
// a real worker on a private Redis deployment, jobs submitted, the Redis master that holds the queue
// killed mid-run, and what a customer can check afterwards — every job ended, none lost, none charged
// twice, the API (its rate limiter first of all) answering again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type JsonResponse, type TestApi } from './app';
import { upload } from './jobs';
import { auditMoney, isTerminal, pollUntil, sleep, type MoneyReport } from './processes';
import { startWorker, type TestWorker } from './worker';

export const JOBS = 8;
const CREDITS = 10_000;
const CLOSE_MS = 15_000;

export interface FailoverRun {
  api: TestApi;
  worker: TestWorker;
  close(): Promise<void>;
}

/** The API and a worker on `redisEnv` (REDIS_CLUSTER_NODES or REDIS_SENTINELS…), in a region of their own. */
export async function startOnRedis(region: string, redisEnv: Record<string, string>): Promise<FailoverRun> {
  const storage = await mkdtemp(join(tmpdir(), `mj-${region}-`));
  const env = { REGION: region, STORAGE_DIR: storage, ...redisEnv };
  const api = await startApi(env);
  const worker = await startWorker({
    ...env,
    PUBLIC_BASE_URL: api.config.publicBaseUrl,
    DOCS_URL: api.config.docsUrl,
    WORKER_CONCURRENCY: '2',
    // A job whose queue entry the failover lost (replication is asynchronous) is found by the
    // reconciler: seconds here instead of a minute.
    WORKER_RECONCILE_MS: '2000',
    WORKER_STALE_JOB_SECONDS: '5',
    WORKER_LOCK_MS: '5000',
  });
  return {
    api,
    worker,
    async close() {
      // Bounded: after a failed run a worker may wait on jobs that cannot end; the servers must still go.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([worker.close(), api.close()]),
        new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_MS))),
      ]);
      clearTimeout(timer);
      await rm(storage, { recursive: true, force: true });
    },
  };
}

/**
 * A submit as a careful client makes it: the same Idempotency-Key again after a 503 (the API may have
 * answered while Redis was failing over), until it is accepted.
 */
async function submit(api: TestApi, key: string, uploadId: string, idempotencyKey: string): Promise<JsonResponse> {
  return pollUntil(
    `submit ${idempotencyKey} to be accepted`,
    async () => {
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key,
        body: { inputs: [{ upload_id: uploadId }] },
        headers: { 'idempotency-key': idempotencyKey },
      });
      if (response.status === 503) return undefined;
      return response;
    },
    60_000,
    250,
  );
}

/** The job once it ended, read as a careful client reads it: a 503 (retryable) is asked again. */
async function jobEnd(api: TestApi, key: string, id: string): Promise<any> {
  return pollUntil(
    `job ${id} to end`,
    async () => {
      const response = await call(api, 'GET', `/v1/sdr2hdr/jobs/${id}`, { key });
      if (response.status === 503) return undefined;
      if (response.status !== 200)
        throw new Error(`GET job ${id}: ${response.status} ${JSON.stringify(response.body)}`);
      return isTerminal(response.body.status) ? response.body : undefined;
    },
    90_000,
    250,
  );
}

export interface FailoverOutcome {
  jobs: any[];
  money: MoneyReport;
  /** Statuses of the requests made while the master was away and being replaced. */
  duringFailover: number[];
  /** A request after the failover: its status and rate-limit headers. */
  after: JsonResponse;
}

/**
 * What a failover must leave: every job succeeded, the money exact, the API (rate limiter included)
 * answering after it, and nothing but 200 or a 503 envelope while it ran — never a 500.
 */
export function expectNothingLost(outcome: FailoverOutcome): void {
  expect(outcome.jobs.map((job) => job.status)).toEqual(Array(JOBS).fill('succeeded'));
  expect(outcome.money.problems).toEqual([]);
  expect(outcome.after.status).toBe(200);
  expect(outcome.after.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
  expect(Number(outcome.after.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
  expect(outcome.duringFailover.filter((status) => status !== 200 && status !== 503)).toEqual([]);
}

/**
 * Submits JOBS jobs, runs `failover` (kill the master, wait for its replacement) when half are in,
 * submits the rest, and waits for every one to end.
 */
export async function jobsThroughFailover(run: FailoverRun, failover: () => Promise<void>): Promise<FailoverOutcome> {
  const { api } = run;
  const account = await createAccount(api, { credits: CREDITS });
  const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90, seconds: 2 }));
  const ids: string[] = [];
  const runId = `${process.pid}-${Date.now()}`;
  const duringFailover: number[] = [];
  for (let i = 0; i < JOBS; i++) {
    if (i === JOBS / 2) {
      // Mid-run: the first jobs are queued or processing on the worker.
      await pollUntil(
        'a job to be processing',
        async () => {
          const job = await call(api, 'GET', `/v1/sdr2hdr/jobs/${ids[0]}`, { key: account.apiKey });
          return job.body.status !== 'queued';
        },
        30_000,
        100,
      );
      let failing = true;
      const probing = (async () => {
        while (failing) {
          const response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey }).catch(
            () => undefined,
          );
          duringFailover.push(response?.status ?? 0);
          await sleep(200);
        }
      })();
      try {
        await failover();
      } finally {
        failing = false;
        await probing;
      }
    }
    const response = await submit(api, account.apiKey, uploadId, `${runId}-${i}`);
    if (response.status !== 202) throw new Error(`submit ${i}: ${response.status} ${JSON.stringify(response.body)}`);
    ids.push(response.body.job_id);
  }
  const jobs = await Promise.all(ids.map((id) => jobEnd(api, account.apiKey, id)));
  const money = await auditMoney(api, account.apiKey, jobs, CREDITS);
  const after = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
  return { jobs, money, duringFailover, after };
}
