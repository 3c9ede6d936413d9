// Benchmark: submits while the worker's retention purges work through a million expired jobs (issue 28).
// A private database is seeded once by SQL generate_series (test/support/expired-jobs.ts: each job with
// two items, its asset, its event, delivery and attempt) and kept as a template; each run copies it.
// The submit load of bench/submits.ts (20 connections, probed uploads) runs alternately without the
// purge (the baseline) and with the purge running in its own process (bench/lib/purge-runner.ts: the
// retention purge and the webhook event purge, concurrently, as a worker runs them). Target: submit p99
// during the purge ≤ 1.5× without it. measurePurgeImpact is also what bench/growth.ts calls.
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS, MIGRATIONS_TRANSACTION_MODE } from '../migrations';
import { seedExpiredJobs } from '../test/support/expired-jobs';
import { createAccount, fakeHeartbeat, submitJob, uploadFile } from './lib/client';
import { adminQuery, BENCH_PLAN, createEnvironment, POSTGRES, type BenchEnvironment } from './lib/environment';
import { load, type LoadResult } from './lib/load';
import { sdrClip } from './lib/media';
import { startProcess } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { alternate, median, round } from './lib/stats';

const CONNECTIONS = 20;
const ACCOUNTS = 20;
const REGION = 'bench';
/** Bump when the seed's shape changes: a seed database of another version is written again. */
const SEED_VERSION = 1;
/** Rows one purged job stands for (job, two items, asset) and one purged event (event, delivery, attempt). */
const ROWS_PER_JOB = 4;
const ROWS_PER_EVENT = 3;

export interface PurgeRun {
  jobs: number;
  events: number;
  batches: number;
  seconds: number;
}

export interface PurgeImpact {
  /** Submit load windows without the purge (the baseline) and with it, alternately. */
  without: LoadResult[];
  during: LoadResult[];
  /** The purge's work over all the windows it ran in. */
  purge: PurgeRun & { rowsPerSecond: number; jobsPerSecond: number };
}

/**
 * A database named `name` holding `count` expired jobs (with items, asset, event, delivery, attempt),
 * migrated and analysed; left as it is when it already holds this seed. Returns its name.
 */
export async function ensurePurgeSeed(name: string, count: number, log: (message: string) => void): Promise<string> {
  const url = `${POSTGRES}/${name}`;
  const existing = new Client({ connectionString: url });
  try {
    await existing.connect();
    const { rows } = await existing.query<{ version: number; jobs: number }>(
      'SELECT version, jobs FROM bench_purge_seed',
    );
    if (rows[0]?.version === SEED_VERSION && rows[0]?.jobs === count) {
      log(`purge: reusing the seeded database ${name} (${count} expired jobs)`);
      return name;
    }
  } catch {
    // No such database, or an unfinished seed: written again below.
  } finally {
    await existing.end().catch(() => undefined);
  }
  log(`purge: seeding ${count} expired jobs into ${name} (once; later runs reuse it)`);
  const started = Date.now();
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${name}"`);
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTransactionMode: MIGRATIONS_TRANSACTION_MODE,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
    await dataSource.query(
      `INSERT INTO plans (id, requests_per_second, concurrent_jobs, processing_minutes_per_month, apis, max_output_height,
                          usd_per_credit, webhook_endpoints, upload_storage_bytes)
       VALUES ($1, 1000000, 1000000, NULL, '{sdr2hdr,audio}', 2160, 0.005, 1000000, 1099511627776)`,
      [BENCH_PLAN],
    );
    await dataSource.query(`INSERT INTO accounts (id, name, plan_id) VALUES ('acct_expiredseed', 'expired', $1)`, [
      BENCH_PLAN,
    ]);
    await seedExpiredJobs((sql, params) => dataSource.query(sql, params), {
      accountId: 'acct_expiredseed',
      tag: 'seed',
      count,
    });
    await dataSource.query('VACUUM ANALYZE');
    await dataSource.query('CREATE TABLE bench_purge_seed (version integer NOT NULL, jobs integer NOT NULL)');
    await dataSource.query('INSERT INTO bench_purge_seed VALUES ($1, $2)', [SEED_VERSION, count]);
  } finally {
    await dataSource.destroy();
  }
  log(`purge: seeded in ${Math.round((Date.now() - started) / 1000)} s`);
  return name;
}

/**
 * Runs `submit` windows alternately without and with the worker's purges running (a process of its
 * own, started for each window and stopped between batches after it) against `env`'s database, which
 * must hold expired rows enough for every window. `upkeepEnv` overrides UPKEEP_BATCH_SIZE/…_PAUSE_MS.
 */
export async function measurePurgeImpact(options: {
  env: BenchEnvironment;
  submit: (seconds: number) => Promise<LoadResult>;
  rounds: number;
  seconds: number;
  log(message: string): void;
  upkeepEnv?: Record<string, string>;
}): Promise<PurgeImpact> {
  const total: PurgeRun = { jobs: 0, events: 0, batches: 0, seconds: 0 };
  const during = async (): Promise<LoadResult> => {
    let ended: PurgeRun | undefined;
    let purging!: () => void;
    const started = new Promise<void>((resolve) => (purging = resolve));
    const runner = await startProcess(
      'dist-bench/bench/lib/purge-runner.js',
      { ...options.env.serviceEnv, ...options.upkeepEnv },
      {
        listen: false,
        onLine: (line) => {
          if (line === 'PURGING') purging();
          if (line.startsWith('PURGED ')) ended = JSON.parse(line.slice('PURGED '.length)) as PurgeRun;
        },
      },
    );
    try {
      await started;
      return await options.submit(options.seconds);
    } finally {
      await runner.stop();
      if (!ended) throw new Error('purge: the purge runner ended without its summary');
      if (ended.jobs === 0 && ended.events === 0) throw new Error('purge: nothing was left to purge in a window');
      total.jobs += ended.jobs;
      total.events += ended.events;
      total.batches += ended.batches;
      total.seconds += ended.seconds;
      options.log(
        `purge: window purged ${ended.jobs} jobs and ${ended.events} events in ${ended.batches} batches (${round(ended.seconds, 1)} s)`,
      );
    }
  };
  const runs = await alternate(
    options.rounds,
    () => during(),
    () => options.submit(options.seconds),
  );
  const failures = [...runs.ours, ...runs.bare].reduce((sum, run) => sum + run.failures, 0);
  if (failures > 0) throw new Error(`purge: ${failures} requests failed; the numbers would be meaningless`);
  const rows = total.jobs * ROWS_PER_JOB + total.events * ROWS_PER_EVENT;
  return {
    without: runs.bare,
    during: runs.ours,
    purge: {
      ...total,
      rowsPerSecond: total.seconds > 0 ? rows / total.seconds : 0,
      jobsPerSecond: total.seconds > 0 ? total.jobs / total.seconds : 0,
    },
  };
}

export async function benchPurge(context: BenchContext): Promise<BenchResult> {
  const expired = context.quick ? 20_000 : 1_000_000;
  const seconds = context.quick ? 2 : 10;
  const rounds = context.quick ? 1 : 3;
  const accountCount = context.quick ? 5 : ACCOUNTS;
  const seed = await ensurePurgeSeed(
    `mediajobs_bench_purge_seed${context.quick ? '_quick' : ''}`,
    expired,
    context.log,
  );
  const env = await createEnvironment('purge', { template: seed });
  const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION });
  const heartbeat = fakeHeartbeat(env, REGION);
  try {
    const clip = await sdrClip(320, 180, 1);
    const accounts: { apiKey: string; uploadId: string }[] = [];
    for (let i = 0; i < accountCount; i++) {
      const account = await createAccount(env, api.url, 1_000_000_000);
      const uploadId = await uploadFile(api.url, account.apiKey, clip);
      await submitJob(api.url, account.apiKey, { inputs: [{ upload_id: uploadId }] });
      accounts.push({ apiKey: account.apiKey, uploadId });
    }
    let next = 0;
    const submit = (duration: number) =>
      load({
        url: `${api.url}/v1/sdr2hdr/jobs`,
        method: 'POST',
        connections: CONNECTIONS,
        seconds: duration,
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          const account = accounts[next++ % accounts.length];
          return {
            ...request,
            headers: { ...request.headers, 'x-api-key': account.apiKey, 'idempotency-key': randomUUID() },
            body: JSON.stringify({ inputs: [{ upload_id: account.uploadId }] }),
          };
        },
      });
    context.log('purge: warming up');
    await submit(context.quick ? 1 : 2);
    const loadBefore = loadavg()[0];
    const impact = await measurePurgeImpact({ env, submit, rounds, seconds, log: context.log });
    const { purge } = impact;
    context.log(
      `purge: ${purge.jobs} jobs + ${purge.events} events in ${purge.batches} batches over ${round(purge.seconds, 1)} s: ` +
        `${Math.round(purge.rowsPerSecond)} rows/s (${Math.round(purge.jobsPerSecond)} jobs/s); ` +
        `a purge of ${expired} jobs takes about ${Math.round(expired / Math.max(1, purge.jobsPerSecond))} s`,
    );
    return compare(
      'purge',
      `POST /v1/sdr2hdr/jobs p99 (${CONNECTIONS} connections, ${accountCount} accounts, ${seconds} s × ${rounds} rounds) while the worker's retention and event purges work through ${expired} expired jobs (items, assets, events, deliveries, attempts) vs without them`,
      {
        metric: 'submit p99 ms',
        ours: impact.during.map((run) => run.p99Ms),
        bare: impact.without.map((run) => run.p99Ms),
        higherIsBetter: false,
      },
      { text: '≤ 1.5× of p99 without the purge', met: (ratio) => ratio <= 1.5 },
      {
        expired_jobs_seeded: expired,
        during_p50_ms: median(impact.during.map((run) => run.p50Ms)),
        without_p50_ms: median(impact.without.map((run) => run.p50Ms)),
        during_req_per_s: round(median(impact.during.map((run) => run.requestsPerSecond))),
        without_req_per_s: round(median(impact.without.map((run) => run.requestsPerSecond))),
        purged_jobs: purge.jobs,
        purged_events: purge.events,
        purge_batches: purge.batches,
        purge_seconds: round(purge.seconds, 1),
        purge_rows_per_second: Math.round(purge.rowsPerSecond),
        purge_jobs_per_second: Math.round(purge.jobsPerSecond),
        load_average_1m: [round(loadBefore), round(loadavg()[0])],
      },
    );
  } finally {
    heartbeat.stop();
    await api.stop();
    await env.close();
  }
}
