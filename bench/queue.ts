// Benchmark 3: trivial jobs end to end through our worker path — our producer (JobQueue.enqueue,
// the submit's add), the MediaWorker's BullMQ consumer and the JobProcessor: claim, item start,
// input lookup, a media step that does nothing, output stored, then the one settlement transaction
// (item, asset, hold settled, outbox event) — against bare BullMQ add + a no-op processor at the
// same concurrency. Also the add → start latency of each at a light load.
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { writeFile } from 'node:fs/promises';
import { WorkerModule } from '../src/worker.module';
import { parseConfig } from '../src/common/config/config';
import { JobQueue } from '../src/jobs/job-queue';
import { QueueOwner } from '../src/queues/queue-owner';
import { BullMqDriver } from '../src/queues/drivers/bullmq.driver';
import { outputSpec, resolveOutput } from '../src/jobs/output-options';
import { MEDIA_RUNNER, type MediaRunner, type RunItemRequest } from '../src/processing/media-runner';
import { ProcessingRepository } from '../src/processing/processing.repository';
import { RunItem } from '../src/processing/usecases/run-item/run-item.usecase';
import { createAccount, uploadFile } from './lib/client';
import { createEnvironment, type BenchEnvironment } from './lib/environment';
import { sdrClip } from './lib/media';
import { sleep, startProcess } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { alternate, median, percentile, round } from './lib/stats';

/** The seeded jobs' options and spec: an sdr2hdr job with every default, as a submit stores it. */
const DEFAULT_JOB = resolveOutput({ api: 'sdr2hdr' });

const CONCURRENCY = 8;
/** Adds in flight at once, as many API requests would make them. */
const ADD_PARALLELISM = 50;
const REGION = 'benchq';
const LAYER_REGION = 'benchl';
const LIGHT_LOAD_INTERVAL_MS = 20;
/**
 * Jobs are spread over many accounts, as in production: each account's settlements queue on its
 * row lock by design (that is what keeps its balance exact), so one account alone would measure
 * that lock, not the queue.
 */
const ACCOUNTS = 50;

/** Runs `task` for 0..count-1 with at most `parallelism` in flight. */
async function pool(count: number, parallelism: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallelism, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** A media step that does nothing but write a tiny output, and notes when each job started (one-pass items only). */
class TrivialRunner implements Pick<MediaRunner, 'run'> {
  readonly startedAt = new Map<string, number>();
  async run(request: RunItemRequest) {
    const jobId = /mediajobs-(job_[A-Za-z0-9]+)-/.exec(request.outputPath)?.[1];
    if (jobId) this.startedAt.set(jobId, Date.now());
    const path = `${request.outputPath}.mp4`;
    await writeFile(path, 'x');
    return {
      ok: true as const,
      path,
      processedSeconds: 1,
      outputWidth: 320,
      outputHeight: 180,
      container: 'mp4',
      contentType: 'video/mp4',
      media: {},
    };
  }
}

interface Owner {
  accountId: string;
  uploadId: string;
}

/**
 * Inserts queued one-item jobs with their holds, round-robin over the owners, as that many submits
 * would have left them (their holds and their owners' open jobs counted).
 */
async function insertJobs(env: BenchEnvironment, ids: string[], owners: Owner[]): Promise<void> {
  const accountOf = ids.map((_, i) => owners[i % owners.length].accountId);
  const sourceOf = ids.map((_, i) => JSON.stringify({ type: 'upload', upload_id: owners[i % owners.length].uploadId }));
  await env.query(
    `UPDATE accounts a SET reserved_credits = reserved_credits + n.count, open_jobs = open_jobs + n.count
       FROM (SELECT account_id, count(*) AS count FROM unnest($1::text[]) AS account_id GROUP BY account_id) n
      WHERE a.id = n.account_id`,
    [accountOf],
  );
  await env.query(
    `INSERT INTO jobs (id, account_id, api, status, region, output_options, output_spec, metadata, estimated_credits, estimated_seconds, request_id)
     SELECT id, account_id, 'sdr2hdr', 'queued', $3, $4, $5, '{}', 1, 1, 'req_bench'
       FROM unnest($1::text[], $2::text[]) AS j(id, account_id)`,
    [ids, accountOf, REGION, JSON.stringify(DEFAULT_JOB.output), JSON.stringify(outputSpec(DEFAULT_JOB))],
  );
  await env.query(
    `INSERT INTO job_items (job_id, index, status, source, duration_seconds, width, height, estimated_credits)
     SELECT id, 0, 'queued', source::jsonb, 1, 320, 180, 1 FROM unnest($1::text[], $2::text[]) AS i(id, source)`,
    [ids, sourceOf],
  );
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`queue: timed out waiting for ${what}`);
    await sleep(20);
  }
}

export async function benchQueue(context: BenchContext): Promise<BenchResult> {
  const jobsPerRound = context.quick ? 500 : 10_000;
  const rounds = context.quick ? 1 : 3;
  const lightLoadJobs = context.quick ? 50 : 200;
  const accounts = context.quick ? 10 : ACCOUNTS;
  const env = await createEnvironment('queue');
  const owners: Owner[] = [];
  {
    // The API only sets up the accounts and inputs; it is stopped before anything is measured.
    const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION });
    try {
      const clip = await sdrClip(320, 180, 1);
      for (let i = 0; i < accounts; i++) {
        const account = await createAccount(env, api.url, 1_000_000_000);
        owners.push({ accountId: account.accountId, uploadId: await uploadFile(api.url, account.apiKey, clip) });
      }
    } finally {
      await api.stop();
    }
  }
  const config = parseConfig({
    ...env.serviceEnv,
    REGION,
    WORKER_CONCURRENCY: String(CONCURRENCY),
    LOG_LEVEL: 'warn',
  });
  const runner = new TrivialRunner();
  const worker = await Test.createTestingModule({
    imports: [WorkerModule.forRoot(config)],
  })
    .overrideProvider(MEDIA_RUNNER)
    .useValue(runner)
    .compile();
  await worker.init();
  // The queue layer alone: the same producer, consumer and BullMQ options, and a job's unit fanned out
  // to one item unit that does nothing (no database) — what our queue code costs on top of BullMQ.
  let layerDone = 0;
  const layerConfig = parseConfig({
    ...env.serviceEnv,
    REGION: LAYER_REGION,
    WORKER_CONCURRENCY: String(CONCURRENCY),
    LOG_LEVEL: 'warn',
  });
  const layerWorker = await Test.createTestingModule({
    imports: [WorkerModule.forRoot(layerConfig)],
  })
    .overrideProvider(ProcessingRepository)
    .useValue({ openItems: async () => [0], staleOpenJobs: async () => [], purgeExpired: async () => [] })
    .overrideProvider(RunItem)
    .useValue({
      execute: async () => {
        layerDone++;
        return null;
      },
    })
    .compile();
  await layerWorker.init();
  const redis = new Redis(env.redisUrl);
  const producerQueues = new QueueOwner(config, new BullMqDriver(config), redis);
  const producer = new JobQueue(config, redis, producerQueues);

  const bareConnection = { host: new URL(env.redisUrl).hostname, port: Number(new URL(env.redisUrl).port || 6379) };
  const bareQueue = new Queue('bare', { connection: bareConnection, prefix: `${env.redisPrefix}bare` });
  let bareDone = 0;
  const bareStartLatencies: number[] = [];
  const bareWorker = new Worker(
    'bare',
    async (job) => {
      if (job.data.addedAt) bareStartLatencies.push(Date.now() - job.data.addedAt);
    },
    { connection: bareConnection, prefix: `${env.redisPrefix}bare`, concurrency: CONCURRENCY },
  );
  bareWorker.on('completed', () => bareDone++);

  let batch = 0;
  const oursRound = async (count: number): Promise<number> => {
    const prefix = `job_b${batch++}x`;
    const ids = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(6, '0')}`);
    await insertJobs(env, ids, owners);
    const started = Date.now();
    await pool(count, ADD_PARALLELISM, (i) => producer.enqueue(ids[i], REGION));
    await waitFor(
      async () => {
        const [{ open }] = await env.query<{ open: string }>(
          `SELECT count(*) AS open FROM jobs WHERE id LIKE $1 AND status <> 'succeeded'`,
          [`${prefix}%`],
        );
        return Number(open) === 0;
      },
      600_000,
      `${count} jobs of ours`,
    );
    return count / ((Date.now() - started) / 1000);
  };
  const layerRound = async (count: number): Promise<number> => {
    const target = layerDone + count;
    const prefix = `job_l${batch++}x`;
    const started = Date.now();
    await pool(count, ADD_PARALLELISM, (i) => producer.enqueue(`${prefix}${i}`, LAYER_REGION));
    await waitFor(async () => layerDone >= target, 600_000, `${count} queue-layer jobs`);
    return count / ((Date.now() - started) / 1000);
  };
  const bareRound = async (count: number): Promise<number> => {
    const target = bareDone + count;
    const started = Date.now();
    await pool(count, ADD_PARALLELISM, async () => {
      await bareQueue.add('job', { addedAt: 0 }, { removeOnComplete: true });
    });
    await waitFor(async () => bareDone >= target, 600_000, `${count} bare jobs`);
    return count / ((Date.now() - started) / 1000);
  };

  try {
    context.log('queue: warming up both paths');
    await oursRound(context.quick ? 50 : 200);
    await bareRound(context.quick ? 50 : 200);
    const runs = await alternate<number>(
      rounds,
      () => oursRound(jobsPerRound),
      () => bareRound(jobsPerRound),
    );
    const layerRuns = await alternate<number>(
      rounds,
      () => layerRound(jobsPerRound),
      () => bareRound(jobsPerRound),
    );

    context.log(`queue: add → start latency at ${1000 / LIGHT_LOAD_INTERVAL_MS} jobs/s`);
    const latencyPrefix = `job_lat${batch}x`;
    const latencyIds = Array.from({ length: lightLoadJobs }, (_, i) => `${latencyPrefix}${String(i).padStart(6, '0')}`);
    await insertJobs(env, latencyIds, owners);
    const addedAt = new Map<string, number>();
    for (const id of latencyIds) {
      addedAt.set(id, Date.now());
      await producer.enqueue(id, REGION);
      await sleep(LIGHT_LOAD_INTERVAL_MS);
    }
    await waitFor(async () => latencyIds.every((id) => runner.startedAt.has(id)), 60_000, 'the latency jobs');
    const oursLatencies = latencyIds.map((id) => runner.startedAt.get(id)! - addedAt.get(id)!);
    bareStartLatencies.length = 0;
    for (let i = 0; i < lightLoadJobs; i++) {
      await bareQueue.add('job', { addedAt: Date.now() }, { removeOnComplete: true });
      await sleep(LIGHT_LOAD_INTERVAL_MS);
    }
    await waitFor(async () => bareStartLatencies.length >= lightLoadJobs, 60_000, 'the bare latency jobs');

    const [{ charged }] = await env.query<{ charged: string }>(
      `SELECT count(*) AS charged FROM jobs WHERE status = 'succeeded' AND charged_credits = 1 AND billing_state = 'settled'`,
    );
    return compare(
      'queue',
      `${jobsPerRound} trivial jobs over ${accounts} accounts × ${rounds} rounds, concurrency ${CONCURRENCY}: our producer + worker path (claim, settle, asset, outbox) vs bare BullMQ add + no-op`,
      { metric: 'jobs/s', ours: runs.ours, bare: runs.bare, higherIsBetter: true },
      { text: '≥ 0.50 of bare jobs/s', met: (ratio) => ratio >= 0.5 },
      {
        queue_layer_jobs_per_second: layerRuns.ours.map((value) => round(value)),
        queue_layer_bare_jobs_per_second: layerRuns.bare.map((value) => round(value)),
        queue_layer_ratio: round(median(layerRuns.ours) / median(layerRuns.bare), 3),
        ours_add_to_start_p50_ms: percentile(oursLatencies, 50),
        ours_add_to_start_p99_ms: percentile(oursLatencies, 99),
        bare_add_to_start_p50_ms: percentile(bareStartLatencies, 50),
        bare_add_to_start_p99_ms: percentile(bareStartLatencies, 99),
        latency_load_jobs_per_second: round(1000 / LIGHT_LOAD_INTERVAL_MS, 1),
        jobs_settled_exactly_once: Number(charged),
      },
    );
  } finally {
    await bareWorker.close();
    await bareQueue.close();
    await producerQueues.onApplicationShutdown();
    redis.disconnect();
    await worker.close();
    await layerWorker.close();
    await env.close();
  }
}
