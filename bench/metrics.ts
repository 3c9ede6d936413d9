// Benchmark: what a Prometheus scrape of the API costs with 10,000 jobs in the database (1,000 of them
// open, holding credits and waiting in their region's queue), against a bare prom-client registry with
// Node's default metrics served by bare Fastify. Each of our scrapes waits out the 1 s sharing of
// scrape-time reads, so every sample pays for its reads of Redis (queue counts, heartbeats) and
// PostgreSQL (open holds, webhook backlog). Timings are client-side (a GET over loopback).
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createAccount } from './lib/client';
import { createEnvironment } from './lib/environment';
import { sleep, startProcess } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { alternate, median, percentile, round } from './lib/stats';

const REGION = 'benchmetrics';
const JOBS = 10_000;
const OPEN = 1_000;
const TOKEN = 'bench-metrics-token-0123456789';

async function scrape(url: string, token?: string): Promise<{ ms: number; body: string }> {
  const started = performance.now();
  const response = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const body = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`GET ${url}/metrics: ${response.status} ${body.slice(0, 200)}`);
  return { ms, body };
}

function sample(body: string, series: string): number | null {
  const line = body.split('\n').find((candidate) => candidate.startsWith(series));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : null;
}

export async function benchMetrics(context: BenchContext): Promise<BenchResult> {
  const env = await createEnvironment('metrics');
  const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION, METRICS_TOKEN: TOKEN });
  const bare = await startProcess('dist-bench/bench/bare/metrics-server.js', {});
  const connection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(`media.${REGION}`, { connection, prefix: env.redisPrefix });
  try {
    const account = await createAccount(env, api.url, 0);
    // 9,000 finished jobs and 1,000 open ones holding credits, as the jobs table of a busy day.
    await env.query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits,
                         billing_state, request_id, attempts, created_at, started_at, finished_at)
       SELECT 'job_bench' || lpad(n::text, 6, '0'), $1, CASE WHEN n % 4 = 0 THEN 'audio' ELSE 'sdr2hdr' END,
              CASE WHEN n <= $3 THEN 'queued' ELSE 'succeeded' END, $4, '{}'::jsonb, 10,
              CASE WHEN n <= $3 THEN 0 ELSE 8 END, CASE WHEN n <= $3 THEN 'authorised' ELSE 'settled' END,
              'req_bench' || n, CASE WHEN n <= $3 THEN 0 ELSE 1 END, now() - n * interval '1 second',
              CASE WHEN n <= $3 THEN NULL ELSE now() - n * interval '1 second' END,
              CASE WHEN n <= $3 THEN NULL ELSE now() END
         FROM generate_series(1, $2) AS n`,
      [account.accountId, JOBS, OPEN, REGION],
    );
    // The open ones among the account's open jobs, as their submits would have counted them.
    await env.query(`UPDATE accounts SET open_jobs = $2 WHERE id = $1`, [account.accountId, OPEN]);
    await queue.addBulk(
      Array.from({ length: OPEN }, (_, index) => {
        const jobId = `job_bench${String(index + 1).padStart(6, '0')}`;
        return { name: 'process-job', data: { jobId }, opts: { jobId } };
      }),
    );
    const redis = new Redis(env.redisUrl);
    await redis.sadd(`${env.redisPrefix}:regions`, REGION);
    await redis.zadd(`${env.redisPrefix}:workers:${REGION}`, Date.now() + 3600_000, 'bench-heartbeat');
    redis.disconnect();
    // Some traffic, so the HTTP series have their usual children.
    for (let index = 0; index < 50; index++) {
      await fetch(`${api.url}/v1/account/credits`, { headers: { 'x-api-key': account.apiKey } });
      await fetch(`${api.url}/v1/sdr2hdr/jobs/job_bench000001`, { headers: { 'x-api-key': account.apiKey } });
      await fetch(`${api.url}/health/ready`);
    }

    const first = await scrape(api.url, TOKEN);
    const check = {
      holds_open: sample(first.body, 'mediajobs_holds_open '),
      queue_waiting: sample(first.body, `mediajobs_queue_jobs{region="${REGION}",state="waiting"}`),
    };
    if (check.holds_open !== OPEN || check.queue_waiting !== OPEN)
      throw new Error(`metrics: the scrape does not see the seeded jobs: ${JSON.stringify(check)}`);
    await scrape(bare.url);

    const rounds = context.quick ? 8 : 30;
    const runs = await alternate(
      rounds,
      async () => {
        await sleep(1100); // past the 1 s sharing: this scrape reads Redis and PostgreSQL itself
        return (await scrape(api.url, TOKEN)).ms;
      },
      async () => (await scrape(bare.url)).ms,
    );
    const last = await scrape(api.url, TOKEN);
    const bareBody = (await scrape(bare.url)).body;
    const series = (body: string) => body.split('\n').filter((line) => line && !line.startsWith('#')).length;
    context.log(
      `metrics: ours median ${round(median(runs.ours))} ms (p90 ${round(percentile(runs.ours, 90))}), bare ${round(median(runs.bare))} ms`,
    );
    return compare(
      'metrics',
      `GET /metrics of the API with ${JOBS} jobs in the database (${OPEN} open, queued in BullMQ) vs a bare prom-client registry of Node defaults on bare Fastify; client-side ms per scrape, sequential`,
      { metric: 'ms per scrape', ours: runs.ours, bare: runs.bare, higherIsBetter: false },
      { text: 'a scrape ≤ 50 ms at the median (Prometheus scrapes every 15 s)', met: () => median(runs.ours) <= 50 },
      {
        jobs_in_database: JOBS,
        open_jobs: OPEN,
        ours_min_ms: round(Math.min(...runs.ours)),
        bare_min_ms: round(Math.min(...runs.bare)),
        ours_p90_ms: round(percentile(runs.ours, 90)),
        bare_p90_ms: round(percentile(runs.bare, 90)),
        ours_bytes: Buffer.byteLength(last.body),
        bare_bytes: Buffer.byteLength(bareBody),
        ours_samples: series(last.body),
        bare_samples: series(bareBody),
        rounds,
      },
    );
  } finally {
    await queue.close();
    connection.disconnect();
    await bare.stop();
    await api.stop();
    await env.close();
  }
}
