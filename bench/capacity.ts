// Benchmark: the capacity model of docs/scaling.md, measured. On a PostgreSQL cluster and a
// redis-server of its own (bench/lib/private-servers.ts), the real API and worker processes (the
// worker's media runner a no-op, bench/lib/noop-worker.ts) and a webhook receiver on loopback:
//  (a) per job of each kind — sdr2hdr one item, sdr2hdr four items, audio one item — from the submit
//      to its settled webhook: PostgreSQL statements (pg_stat_statements) and transactions
//      (pg_stat_database), Redis commands (INFO commandstats), CPU seconds per process; the idle
//      service's background (heartbeats, pumps) measured alone and taken off.
//  (b) one-item jobs offered at rising rates until p99 submit → webhook is twice its low-load value:
//      the knee, with the CPU each process spent per job at every step.
// Counts do not depend on the machine's load; the knee does (a lower bound on a loaded machine), and
// the CPU seconds per job give jobs/s per core independently of it.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { createAccount, submitJob, uploadFile, type BenchAccount } from './lib/client';
import { createEnvironment, type BenchEnvironment } from './lib/environment';
import { sdrClip } from './lib/media';
import { freePort, sleep, startProcess, type Service } from './lib/processes';
import { startPrivatePostgres, startPrivateRedis } from './lib/private-servers';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import {
  cpuDelta,
  databaseDelta,
  machineBusySeconds,
  METER_ROLE,
  readCpu,
  readDatabase,
  readRedis,
  redisDelta,
  total,
  type CpuReading,
  type DatabaseDelta,
} from './lib/server-meters';
import { percentile, round } from './lib/stats';

const run = promisify(execFile);
const REGION = 'benchcap';
const ACCOUNTS = 20;
const WORKERS = 2;
const WORKER_CONCURRENCY = 8;
/** PostgreSQL flushes a backend's transaction counts when it has been idle this long (PG 15: 10 s). */
const STATS_FLUSH_MS = 11_000;

interface Kind {
  name: string;
  api: 'sdr2hdr' | 'audio';
  items: number;
}
const KINDS: Kind[] = [
  { name: 'sdr2hdr, 1 item', api: 'sdr2hdr', items: 1 },
  { name: 'sdr2hdr, 4 items', api: 'sdr2hdr', items: 4 },
  { name: 'audio, 1 item', api: 'audio', items: 1 },
];

/** Receives every webhook; notes when each job's terminal event arrived. */
class Receiver {
  readonly settledAt = new Map<string, number>();
  /** Each job's terminal event. */
  readonly outcome = new Map<string, string>();
  readonly types = new Map<string, number>();
  private server?: Server;
  port = 0;

  async listen(port: number): Promise<void> {
    this.port = port;
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = Date.now();
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          event: string;
          data: { job: { job_id: string } | null };
        };
        this.types.set(event.event, (this.types.get(event.event) ?? 0) + 1);
        if (event.data.job) {
          this.settledAt.set(event.data.job.job_id, at);
          this.outcome.set(event.data.job.job_id, event.event);
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((done) => this.server!.listen(port, '127.0.0.1', done));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }
}

interface Fleet {
  env: BenchEnvironment;
  api: Service;
  workers: Service[];
  redisPid: number;
  postmasterPid: number;
  accounts: (BenchAccount & { video: string; audio: string })[];
  receiver: Receiver;
  meterApp: Client;
  meterStats: Client;
  redis: Redis;
}

function cpuGroups(fleet: Fleet) {
  return {
    postgres: { pids: [fleet.postmasterPid], childrenOf: fleet.postmasterPid },
    redis: { pids: [fleet.redisPid] },
    api: { pids: [fleet.api.pid] },
    workers: { pids: fleet.workers.map((worker) => worker.pid) },
  };
}

interface Reading {
  at: number;
  database: Awaited<ReturnType<typeof readDatabase>>;
  redis: Map<string, number>;
  cpu: CpuReading;
  busy: number;
}

async function read(fleet: Fleet): Promise<Reading> {
  return {
    at: Date.now(),
    database: await readDatabase(fleet.meterStats, fleet.env.name),
    redis: await readRedis(fleet.redis),
    cpu: await readCpu(cpuGroups(fleet)),
    busy: await machineBusySeconds(),
  };
}

interface Delta {
  seconds: number;
  database: DatabaseDelta;
  redis: Record<string, number>;
  cpu: Record<string, number>;
  machineBusy: number;
}

function delta(before: Reading, after: Reading): Delta {
  return {
    seconds: (after.at - before.at) / 1000,
    database: databaseDelta(before.database, after.database),
    redis: redisDelta(before.redis, after.redis),
    cpu: cpuDelta(before.cpu, after.cpu),
    machineBusy: after.busy - before.busy,
  };
}

/** Waits until no job is open and no delivery pending (the meter's polls are counted and taken off). */
async function quiesce(fleet: Fleet, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await fleet.meterApp.query<{ open: string }>(
      `SELECT (SELECT count(*) FROM jobs WHERE status IN ('queued', 'processing'))
            + (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending') AS open`,
    );
    if (Number(rows[0].open) === 0) return;
    if (Date.now() > deadline) throw new Error(`capacity: ${rows[0].open} jobs/deliveries still open`);
    await sleep(250);
  }
}

function body(kind: Kind, account: Fleet['accounts'][number]) {
  const upload = kind.api === 'audio' ? account.audio : account.video;
  return { region: REGION, inputs: Array.from({ length: kind.items }, () => ({ upload_id: upload })) };
}

async function submit(fleet: Fleet, kind: Kind, index: number): Promise<string> {
  const account = fleet.accounts[index % fleet.accounts.length];
  return (await submitJob(fleet.api.url, account.apiKey, body(kind, account), kind.api)).job_id as string;
}

async function waitSettled(fleet: Fleet, ids: string[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!ids.every((id) => fleet.receiver.settledAt.has(id))) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** Per-job costs of `kind`: `jobs` submits (4 in flight), settled and delivered, less the idle background. */
async function countKind(fleet: Fleet, kind: Kind, jobs: number, background: Delta) {
  await quiesce(fleet);
  await sleep(STATS_FLUSH_MS);
  const before = await read(fleet);
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < jobs) ids.push(await submit(fleet, kind, next++));
    }),
  );
  if (!(await waitSettled(fleet, ids, 600_000))) throw new Error(`capacity: ${kind.name} jobs did not settle`);
  const unsucceeded = ids.filter((id) => fleet.receiver.outcome.get(id) !== 'job.succeeded').length;
  if (unsucceeded) throw new Error(`capacity: ${unsucceeded} of the ${kind.name} jobs did not succeed`);
  await quiesce(fleet);
  await sleep(STATS_FLUSH_MS);
  const measured = delta(before, await read(fleet));
  const idle = (value: number) => (value / background.seconds) * measured.seconds;
  const perJob = (value: number, idleValue: number) => round((value - idle(idleValue)) / jobs, 1);
  const redisCommands = total(measured.redis);
  const backgroundRedis = total(background.redis);
  return {
    kind: kind.name,
    jobs,
    seconds: round(measured.seconds, 1),
    pg_statements_per_job: perJob(measured.database.statements, background.database.statements),
    pg_control_statements_per_job: perJob(measured.database.control, background.database.control),
    pg_transactions_per_job: perJob(measured.database.transactions, background.database.transactions),
    pg_rollbacks_per_job: perJob(measured.database.rollbacks, background.database.rollbacks),
    redis_commands_per_job: perJob(redisCommands, backgroundRedis),
    redis_top_commands_per_job: Object.fromEntries(
      Object.entries(measured.redis)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([command, calls]) => [command, perJob(calls, background.redis[command] ?? 0)]),
    ),
    pg_top_statements_per_job: measured.database.top.map((entry) => ({
      calls_per_job: round(entry.calls / jobs, 2),
      query: entry.query,
    })),
    cpu_ms_per_job: Object.fromEntries(
      Object.entries(measured.cpu).map(([name, seconds]) => [
        name,
        round(((seconds - idle(background.cpu[name] ?? 0)) * 1000) / jobs, 2),
      ]),
    ),
  };
}

/** One step of the ramp: one-item jobs offered at `rate`/s for `seconds`, open loop. */
async function rampStep(fleet: Fleet, rate: number, seconds: number) {
  await quiesce(fleet);
  const count = Math.max(10, Math.round(rate * seconds));
  const kind = KINDS[0];
  const submittedAt = new Map<string, number>();
  const submitMs: number[] = [];
  let errors = 0;
  const before = await read(fleet);
  const started = Date.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    pending.push(
      (async () => {
        const at = Date.now();
        try {
          const id = await submit(fleet, kind, i);
          submitMs.push(Date.now() - at);
          submittedAt.set(id, at);
        } catch {
          errors++;
        }
      })(),
    );
  }
  await Promise.all(pending);
  const ids = [...submittedAt.keys()];
  const settled = await waitSettled(fleet, ids, 180_000);
  const after = await read(fleet);
  const measured = delta(before, after);
  const done = ids.filter((id) => fleet.receiver.settledAt.has(id));
  const latencies = done.map((id) => fleet.receiver.settledAt.get(id)! - submittedAt.get(id)!);
  const settledTimes = done.map((id) => fleet.receiver.settledAt.get(id)!);
  // Throughput between the first and the last settlement: the step's steady rate, without the latency
  // of the first job before it (which would read as a shortfall at every rate).
  const settledSpan = (Math.max(...settledTimes) - Math.min(...settledTimes)) / 1000;
  const cpuMsPerJob = Object.fromEntries(
    Object.entries(measured.cpu).map(([name, value]) => [name, round((value * 1000) / Math.max(1, done.length), 2)]),
  );
  const ours = Object.entries(measured.cpu)
    .filter(([name]) => name !== 'bench_client')
    .reduce((sum, [, value]) => sum + value, 0);
  return {
    offered_jobs_per_second: rate,
    jobs: count,
    settled: done.length,
    all_settled: settled,
    submit_errors: errors,
    achieved_jobs_per_second: round((done.length - 1) / settledSpan, 1),
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    submit_p99_ms: percentile(submitMs, 99),
    cpu_ms_per_job: cpuMsPerJob,
    service_cpu_ms_per_job: round((ours * 1000) / Math.max(1, done.length), 2),
    // What the service's processes, the bench client and everything else on the machine used, in cores.
    cores_used: {
      service: round(ours / measured.seconds, 2),
      bench_client: round(measured.cpu.bench_client / measured.seconds, 2),
      others_on_machine: round((measured.machineBusy - ours - measured.cpu.bench_client) / measured.seconds, 2),
    },
    load_average_1m: round(loadavg()[0], 2),
  };
}

async function audioClip(): Promise<string> {
  const path = join(tmpdir(), `mediajobs-capacity-${process.pid}.wav`);
  await run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=48000:duration=1',
    path,
  ]);
  return path;
}

async function startFleet(
  env: BenchEnvironment,
  receiverPort: number,
): Promise<Omit<Fleet, 'redisPid' | 'postmasterPid' | 'receiver' | 'meterApp' | 'meterStats' | 'redis'>> {
  const serviceEnv = {
    ...env.serviceEnv,
    REGION,
    LOG_LEVEL: 'warn',
    ALLOW_PRIVATE_URLS: `127.0.0.1:${receiverPort}`,
  };
  const api = await startProcess('dist/src/main.js', serviceEnv);
  const workers: Service[] = [];
  for (let i = 0; i < WORKERS; i++)
    workers.push(
      await startProcess(
        'dist-bench/bench/lib/noop-worker.js',
        { ...serviceEnv, WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) },
        { listen: false },
      ),
    );
  const video = await sdrClip(320, 180, 1);
  const audio = await audioClip();
  const accounts: Fleet['accounts'] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await createAccount(env, api.url, 1_000_000_000);
    const response = await fetch(`${api.url}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook` }),
    });
    if (response.status !== 201) throw new Error(`webhook endpoint: HTTP ${response.status} ${await response.text()}`);
    accounts.push({
      ...account,
      video: await uploadFile(api.url, account.apiKey, video),
      audio: await uploadFile(api.url, account.apiKey, audio, 'audio/wav'),
    });
  }
  return { env, api, workers, accounts };
}

export async function benchCapacity(context: BenchContext): Promise<BenchResult> {
  const countJobs = context.quick ? 30 : 200;
  const rates = context.quick ? [2, 8, 16] : [2, 4, 8, 12, 16, 24, 32, 48, 64, 96];
  const stepSeconds = context.quick ? 6 : 20;
  const postgres = await startPrivatePostgres();
  const redisServer = await startPrivateRedis();
  const receiver = new Receiver();
  const services: Service[] = [];
  let fleet: Fleet | undefined;
  let env: BenchEnvironment | undefined;
  try {
    env = await createEnvironment('capacity', { postgresUrl: postgres.url, redisUrl: redisServer.url });
    const admin = new Client({ connectionString: env.databaseUrl });
    await admin.connect();
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await admin.query(`CREATE ROLE ${METER_ROLE} LOGIN SUPERUSER`);
    await admin.end();
    await receiver.listen(await freePort());
    const started = await startFleet(env, receiver.port);
    services.push(started.api, ...started.workers);
    const meterUrl = (database: string) => `postgres://${METER_ROLE}@${new URL(postgres.url).host}/${database}`;
    const meterApp = new Client({ connectionString: meterUrl(env.name) });
    const meterStats = new Client({ connectionString: meterUrl('postgres') });
    await meterApp.connect();
    await meterStats.connect();
    fleet = {
      ...started,
      redisPid: redisServer.pid,
      postmasterPid: await postgres.postmasterPid(),
      receiver,
      meterApp,
      meterStats,
      redis: new Redis(redisServer.url),
    };

    context.log('capacity: warm-up');
    for (const kind of KINDS) {
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => submit(fleet!, kind, i)));
      if (!(await waitSettled(fleet, ids, 120_000))) throw new Error('capacity: warm-up jobs did not settle');
    }
    // A job that fails is retried and costs more than one that succeeds: the model is of succeeded jobs.
    const failed = [...receiver.types.keys()].filter((type) => type !== 'job.succeeded');
    if (failed.length)
      throw new Error(`capacity: warm-up jobs ended ${JSON.stringify(Object.fromEntries(receiver.types))}`);
    await quiesce(fleet);
    await sleep(STATS_FLUSH_MS);
    context.log('capacity: the idle background');
    const idleBefore = await read(fleet);
    await sleep(context.quick ? 15_000 : 30_000);
    await sleep(STATS_FLUSH_MS);
    const background = delta(idleBefore, await read(fleet));

    const perKind = [];
    for (const kind of KINDS) {
      context.log(`capacity: counting ${countJobs} × ${kind.name}`);
      const counted = await countKind(fleet, kind, countJobs, background);
      context.log(JSON.stringify(counted));
      perKind.push(counted);
    }

    const steps = [];
    for (const rate of rates) {
      context.log(`capacity: offering ${rate} jobs/s for ${stepSeconds} s`);
      const step = await rampStep(fleet, rate, stepSeconds);
      context.log(JSON.stringify(step));
      steps.push(step);
      const base = steps[0].p99_ms;
      if (!step.all_settled || step.p99_ms > 2 * base || step.achieved_jobs_per_second < 0.8 * rate) break;
    }
    // What one idle worker process costs by itself (its pumps, heartbeat, reconciler and BullMQ's
    // blocking reads and stall checks): the background again with one worker fewer.
    context.log('capacity: the idle background with one worker fewer');
    await quiesce(fleet);
    await fleet.workers[WORKERS - 1].stop();
    await sleep(STATS_FLUSH_MS);
    const fewerBefore = await read(fleet);
    await sleep(context.quick ? 15_000 : 30_000);
    await sleep(STATS_FLUSH_MS);
    const fewer = delta(fewerBefore, await read(fleet));
    const perSecond = (value: number, seconds: number) => value / seconds;
    const idleWorker = {
      pg_statements: round(
        perSecond(background.database.statements, background.seconds) -
          perSecond(fewer.database.statements, fewer.seconds),
        2,
      ),
      pg_transactions: round(
        perSecond(background.database.transactions, background.seconds) -
          perSecond(fewer.database.transactions, fewer.seconds),
        2,
      ),
      redis_commands: round(
        perSecond(total(background.redis), background.seconds) - perSecond(total(fewer.redis), fewer.seconds),
        2,
      ),
    };
    context.log(JSON.stringify({ idle_worker_per_second: idleWorker }));

    const base = steps[0];
    const within = steps.filter((step) => step.all_settled && step.p99_ms <= 2 * base.p99_ms);
    const knee = within[within.length - 1];
    const oneItem = perKind[0];
    const serviceCpuMs = Object.entries(oneItem.cpu_ms_per_job)
      .filter(([name]) => name !== 'bench_client')
      .reduce((sum, [, ms]) => sum + ms, 0);
    return compare(
      'capacity',
      `one-item trivial jobs (no-op media runner) on a private PostgreSQL + redis-server, ${WORKERS} workers × concurrency ${WORKER_CONCURRENCY}, ${ACCOUNTS} accounts: p99 submit → settled webhook at the knee (the highest offered rate whose p99 stays within 2× the low-load p99) vs at ${base.offered_jobs_per_second} jobs/s`,
      { metric: 'p99 ms', ours: [knee.p99_ms], bare: [base.p99_ms], higherIsBetter: false },
      { text: 'a measured model (docs/scaling.md): the knee is where p99 ≤ 2× low load', met: (ratio) => ratio <= 2 },
      {
        knee_jobs_per_second: knee.achieved_jobs_per_second,
        knee_offered_jobs_per_second: knee.offered_jobs_per_second,
        one_item_service_cpu_ms_per_job: round(serviceCpuMs, 1),
        one_item_jobs_per_second_per_core: round(1000 / serviceCpuMs, 1),
        one_item_jobs_per_second_per_core_by_process: Object.fromEntries(
          Object.entries(oneItem.cpu_ms_per_job).map(([name, ms]) => [name, ms > 0 ? round(1000 / ms, 0) : null]),
        ),
        background_per_second: {
          pg_statements: round(background.database.statements / background.seconds, 1),
          pg_transactions: round(background.database.transactions / background.seconds, 1),
          redis_commands: round(total(background.redis) / background.seconds, 1),
          redis_top: Object.fromEntries(
            Object.entries(background.redis)
              .sort((a, b) => b[1] - a[1])
              .slice(0, 6)
              .map(([command, calls]) => [command, round(calls / background.seconds, 2)]),
          ),
        },
        idle_worker_process_per_second: idleWorker,
        idle_with_one_worker_fewer_per_second: {
          pg_statements: round(fewer.database.statements / fewer.seconds, 1),
          pg_transactions: round(fewer.database.transactions / fewer.seconds, 1),
          redis_commands: round(total(fewer.redis) / fewer.seconds, 1),
        },
        per_kind: perKind,
        ramp: steps,
        webhook_types: Object.fromEntries(receiver.types),
        load_average_at_end: loadavg().map((value) => round(value, 2)),
        provisional:
          'counts do not depend on load; the knee and latencies were measured on a shared, loaded 2-core machine: a lower bound',
      },
    );
  } finally {
    if (fleet) {
      fleet.redis.disconnect();
      await fleet.meterApp.end();
      await fleet.meterStats.end();
    }
    for (const service of services.reverse()) await service.stop();
    await receiver.close();
    if (env) await env.close().catch(() => undefined);
    await redisServer.stop();
    await postgres.drop();
    await rm(join(tmpdir(), `mediajobs-capacity-${process.pid}.wav`), { force: true });
  }
}
