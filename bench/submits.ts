// Benchmark 2: POST /v1/sdr2hdr/jobs from an already-probed upload (the probe verdict is cached, so
// ffprobe is out of the measure) — auth, rate limit, idempotency, region health, source and limit
// checks, hold + insert in one transaction, enqueue — against bare Fastify doing the transaction and
// the BullMQ add alone. No worker runs: the region's heartbeat is written by the benchmark, and before
// each window the benchmark ends the jobs the last one queued, as workers would have (drainQueue).
import { randomUUID } from 'node:crypto';
import { createAccount, fakeHeartbeat, submitJob, uploadFile, type BenchAccount } from './lib/client';
import { createEnvironment, type BenchEnvironment } from './lib/environment';
import { load, loadBothWays, type LoadResult } from './lib/load';
import { sdrClip } from './lib/media';
import { startProcess, type Service } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median } from './lib/stats';

const CONNECTIONS = 20;
/** Many accounts, as in production: submits of one account queue on its row lock by design. */
const ACCOUNTS = 20;
export const REGION = 'bench';

export async function benchSubmits(context: BenchContext): Promise<BenchResult> {
  const seconds = context.quick ? 2 : 10;
  const warmUpSeconds = context.quick ? 1 : 2;
  const rounds = context.quick ? 1 : 3;
  const accountCount = context.quick ? 5 : ACCOUNTS;
  const env = await createEnvironment('submits');
  const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, ...submitEnv });
  const bare = await startBareSubmitServer(env);
  const heartbeat = fakeHeartbeat(env, REGION);
  try {
    const accounts = await submitAccounts(env, api.url, accountCount);
    const runs = await loadBothWays(
      'submits',
      { rounds, seconds, warmUpSeconds, log: context.log },
      async (duration) => {
        await drainQueue(env);
        return submitLoad(api.url, accounts, duration, ourHeaders);
      },
      async (duration) => {
        await drainQueue(env);
        return submitLoad(bare.url, accounts, duration, bareHeaders);
      },
    );
    const [{ count: jobs }] = await env.query<{ count: string }>('SELECT count(*) FROM jobs');
    return compare(
      'submits',
      `POST /v1/sdr2hdr/jobs (probed upload, Idempotency-Key), ${CONNECTIONS} connections over ${accountCount} accounts × ${seconds} s × ${rounds} rounds vs bare Fastify + pg + BullMQ (same transaction, one add)`,
      {
        metric: 'req/s',
        ours: runs.ours.map((run) => run.requestsPerSecond),
        bare: runs.bare.map((run) => run.requestsPerSecond),
        higherIsBetter: true,
      },
      { text: '≥ 0.70 of bare req/s', met: (ratio) => ratio >= 0.7 },
      {
        ours_p50_ms: median(runs.ours.map((run) => run.p50Ms)),
        ours_p99_ms: median(runs.ours.map((run) => run.p99Ms)),
        bare_p50_ms: median(runs.bare.map((run) => run.p50Ms)),
        bare_p99_ms: median(runs.bare.map((run) => run.p99Ms)),
        jobs_in_database_after: Number(jobs),
      },
    );
  } finally {
    heartbeat.stop();
    await api.stop();
    await bare.stop();
    await env.close();
  }
}

export type SubmitAccount = BenchAccount & { uploadId: string };

/**
 * What both servers are run with: the service's default MAX_QUEUE_DEPTH (each counts the region's queued
 * jobs up to it, on every submit), with the queue drained before each window so it is never reached.
 */
export const submitEnv = { REGION, MAX_QUEUE_DEPTH: '10000' };

/**
 * Ends every open job of the bench region as a worker would have (succeeded, its hold captured) and
 * vacuums the table, so each window starts from an empty queue. Without it the backlog grew by every
 * window before (~5,000 jobs each): the later windows, whichever server ran them, counted more queued
 * jobs and more open jobs per account on every submit, which no deployment with workers sees.
 */
export async function drainQueue(env: BenchEnvironment): Promise<void> {
  await env.query(
    `UPDATE jobs SET status = 'succeeded', billing_state = 'settled', charged_credits = estimated_credits,
            finished_at = now()
      WHERE region = $1 AND status IN ('queued', 'processing')`,
    [REGION],
  );
  // The endings leave their accounts' open jobs, as a worker's would (every job of this environment is in REGION).
  await env.query(`UPDATE accounts SET open_jobs = 0 WHERE open_jobs <> 0`);
  await env.query('VACUUM (ANALYZE) jobs');
}

/** Accounts with a probed upload each: the first submit of a source probes it; the benchmark measures the ones after. */
export async function submitAccounts(env: BenchEnvironment, apiUrl: string, count: number): Promise<SubmitAccount[]> {
  const clip = await sdrClip(320, 180, 1);
  const accounts: SubmitAccount[] = [];
  for (let i = 0; i < count; i++) {
    const account = await createAccount(env, apiUrl, 1_000_000_000);
    const uploadId = await uploadFile(apiUrl, account.apiKey, clip);
    await submitJob(apiUrl, account.apiKey, { inputs: [{ upload_id: uploadId }] });
    accounts.push({ ...account, uploadId });
  }
  return accounts;
}

/** The bare baseline (bench/bare/submit-server.ts) on the same database and Redis, its keys apart. */
export function startBareSubmitServer(env: BenchEnvironment): Promise<Service> {
  return startProcess('dist-bench/bench/bare/submit-server.js', {
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    REDIS_PREFIX: `${env.redisPrefix}bare`,
    ...submitEnv,
  });
}

/** The bare server takes the account by header: it checks no credential. */
export function bareHeaders(account: SubmitAccount): Record<string, string> {
  return { 'x-account-id': account.accountId };
}

/** What our API is sent: the account's key and a fresh Idempotency-Key per submit. */
export function ourHeaders(account: SubmitAccount): Record<string, string> {
  return { 'x-api-key': account.apiKey, 'idempotency-key': randomUUID() };
}

/** Submits for `seconds` over the accounts in turn, with the headers each server needs to know the account. */
export function submitLoad(
  url: string,
  accounts: SubmitAccount[],
  seconds: number,
  headersFor: (account: SubmitAccount) => Record<string, string>,
): Promise<LoadResult> {
  let next = 0;
  return load({
    url: `${url}/v1/sdr2hdr/jobs`,
    method: 'POST',
    connections: CONNECTIONS,
    seconds,
    headers: { 'content-type': 'application/json' },
    setupRequest: (request) => {
      const account = accounts[next++ % accounts.length];
      return {
        ...request,
        headers: { ...request.headers, ...headersFor(account) },
        body: JSON.stringify({ inputs: [{ upload_id: account.uploadId }] }),
      };
    },
  });
}
