// Data growth: each hot path against the real API on a database of 10,000 jobs and on one of 10
// million (bench/lib/growth-seed.sql), side by side in one run. The two are measured in alternating
// rounds, so a change in the machine's load falls on both; the target is the 10M ÷ 10k ratio of p50
// and p99 (≤ 1.25) for every request path. The upkeep statements (reconciler, sweeper, purge) are
// timed as issued, directly on each database.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { backfillAccountUsageDays } from '../migrations/1765520000000-account-usage-days';
import { recountOpenJobs } from '../migrations/1765530000000-account-open-jobs';
import { parseConfig } from '../src/common/config/config';
import { hashPassword } from '../src/members/password';
import { ProcessingRepository } from '../src/processing/processing.repository';
import { createAccount, fakeHeartbeat, submitJob, uploadFile } from './lib/client';
import { BENCH_PLAN, environmentOn, type BenchEnvironment } from './lib/environment';
import { growthDatabase, LARGE, SMALL, type GrowthDatabase } from './lib/growth-seed';
import { timedLoad, type LoadOptions } from './lib/load';
import { sdrClip } from './lib/media';
import { startProcess, type Service } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, percentile, round } from './lib/stats';

const REGION = 'growth-bench';
const CONNECTIONS = 4;
const PASSWORD = 'growth bench password 0123';
const DEEP_ROWS = 10_000;
const TARGET = 1.25;
/** An upkeep statement is stopped here: its time is then "at least this". */
const UPKEEP_TIMEOUT_MS = 30_000;
/** The upkeep's batch, as the worker runs it by default (UPKEEP_BATCH_SIZE). */
const UPKEEP_BATCH = parseConfig({ NODE_ENV: 'test' }).upkeepBatchSize;

export interface Side {
  label: string;
  db: GrowthDatabase;
  env: BenchEnvironment;
  api: Service;
  accountId: string;
  apiKey: string;
  cookie: string;
  uploadId: string;
  deepCursor: string;
  deepRows: number;
  lastEventIds: string[];
  heartbeat: { stop(): void };
  client: Client;
}

/** A BenchEnvironment on a kept growth database: its own Redis prefix and storage, the database left as it is. */
async function growthEnvironment(db: GrowthDatabase, label: string): Promise<BenchEnvironment> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  return environmentOn({
    name: db.name,
    databaseUrl: db.url,
    client,
    label: `growth${label}`,
    serviceEnv: {
      REGION,
      // The seed spans 400 days: every job in it is one its owner can still read.
      JOB_RETENTION_DAYS: '400',
    },
  });
}

/**
 * The API on one database, with a key and a signed-in owner of its largest account (the one holding
 * millions at 10M): a key made by the admin API, then moved to that account.
 */
export async function startSide(label: string, db: GrowthDatabase, clip: string): Promise<Side> {
  const env = await growthEnvironment(db, label);
  const client = new Client({ connectionString: db.url });
  await client.connect();
  await env.query(
    `INSERT INTO plans (id, requests_per_second, concurrent_jobs, processing_minutes_per_month, apis, max_output_height,
                        usd_per_credit, webhook_endpoints, upload_storage_bytes, event_streams)
     VALUES ($1, 1000000, 1000000, 1000000000, '{sdr2hdr,audio}', 2160, 0.005, 1000000, 1099511627776, 1000)
     ON CONFLICT (id) DO NOTHING`,
    [BENCH_PLAN],
  );
  const [largest] = await env.query<{ account_id: string }>(
    `SELECT account_id FROM jobs GROUP BY account_id ORDER BY count(*) DESC LIMIT 1`,
  );
  const accountId = largest.account_id;
  // Limits no run reaches, but set: a submit runs the quota and spend-cap checks a paying account's
  // submit runs (each sums this period's jobs or charges), as it would on a plan with a quota and a cap.
  await env.query(`UPDATE accounts SET plan_id = $1, spend_limit_usd = 1000000000 WHERE id = $2`, [
    BENCH_PLAN,
    accountId,
  ]);
  const [owner] = await env.query<{ email: string }>(
    `UPDATE members SET password_hash = $2, joined_at = coalesce(joined_at, now())
      WHERE account_id = $1 AND role = 'owner' RETURNING email`,
    [accountId, await hashPassword(PASSWORD)],
  );
  const api = await startProcess('dist/src/main.js', env.serviceEnv);
  const made = await createAccount(env, api.url, 0);
  await env.query(`UPDATE api_keys SET account_id = $1 WHERE account_id = $2`, [accountId, made.accountId]);
  const signedIn = await fetch(`${api.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: api.url },
    body: JSON.stringify({ email: owner.email, password: PASSWORD }),
  });
  if (signedIn.status !== 201) throw new Error(`growth ${label}: sign-in ${signedIn.status} ${await signedIn.text()}`);
  const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0];
  const heartbeat = fakeHeartbeat(env, REGION);
  const uploadId = await uploadFile(api.url, made.apiKey, clip);
  await submitJob(api.url, made.apiKey, { inputs: [{ upload_id: uploadId }] });
  // The page DEEP_ROWS rows down the job list (or as deep as the account goes), by its cursor: the row before it.
  const [{ count }] = await env.query<{ count: string }>(
    `SELECT count(*) FROM jobs WHERE account_id = $1 AND api = 'sdr2hdr'`,
    [accountId],
  );
  const deepRows = Math.min(DEEP_ROWS, Number(count) - 21);
  const [deep] = await env.query<{ id: string }>(
    `SELECT id FROM jobs WHERE account_id = $1 AND api = 'sdr2hdr' ORDER BY id DESC OFFSET $2 LIMIT 1`,
    [accountId, deepRows - 1],
  );
  const events = await env.query<{ id: string }>(
    `SELECT id FROM outbox_events WHERE account_id = $1 ORDER BY id DESC LIMIT 200`,
    [accountId],
  );
  return {
    label,
    db,
    env,
    api,
    accountId,
    apiKey: made.apiKey,
    cookie,
    uploadId,
    deepCursor: deep.id,
    deepRows,
    lastEventIds: events.map((event) => event.id),
    heartbeat,
    client,
  };
}

export async function stopSide(side: Side): Promise<void> {
  side.heartbeat.stop();
  await side.api.stop();
  // What the submits added goes again, so the kept database stays as seeded.
  await side.env.query(`DELETE FROM credit_ledger WHERE job_id IN (SELECT id FROM jobs WHERE region = $1)`, [REGION]);
  await side.env.query(`DELETE FROM outbox_events WHERE job_id IN (SELECT id FROM jobs WHERE region = $1)`, [REGION]);
  await side.env.query(`DELETE FROM jobs WHERE region = $1`, [REGION]);
  // The next run must not read the dead entries these jobs left in the partial indexes of open jobs: this
  // machine's PostgreSQL may run without autovacuum, and a plain VACUUM skips index clean-up when few pages
  // hold dead rows (jobs_open_idx kept 41 dead pages at 10M). 8 s at 10M (docs/explain-10m.md).
  await side.env.query('VACUUM (INDEX_CLEANUP ON, ANALYZE) jobs');
  // Their estimates and charges leave the account's days, and they its open jobs, again (counted over what is left).
  await backfillAccountUsageDays((text, params) => side.env.query(text, params), { accounts: [side.accountId] });
  await recountOpenJobs((text, params) => side.env.query(text, params), { accounts: [side.accountId] });
  await side.env.query(
    `UPDATE accounts a SET reserved_credits = coalesce((SELECT sum(estimated_credits) FROM jobs j
        WHERE j.account_id = a.id AND j.billing_state = 'authorised'), 0) WHERE a.id = $1`,
    [side.accountId],
  );
  await side.client.end();
  await side.env.close();
}

export interface Path {
  name: string;
  /** The load against one side (url: the path on its API). */
  options: (side: Side) => Omit<LoadOptions, 'connections' | 'seconds'>;
}

export const PATHS: Path[] = [
  {
    name: 'job read',
    options: (side) => ({ url: `/v1/sdr2hdr/jobs/${side.deepCursor}`, headers: { 'x-api-key': side.apiKey } }),
  },
  {
    name: 'job list, first page',
    options: (side) => ({ url: '/v1/sdr2hdr/jobs', headers: { 'x-api-key': side.apiKey } }),
  },
  {
    name: 'job list, deep page (cursor)',
    options: (side) => ({
      url: `/v1/sdr2hdr/jobs?starting_after=${side.deepCursor}`,
      headers: { 'x-api-key': side.apiKey },
    }),
  },
  {
    name: 'submit',
    options: (side) => ({
      url: '/v1/sdr2hdr/jobs',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': side.apiKey },
      setupRequest: (spec) => ({
        ...spec,
        headers: { ...spec.headers, 'idempotency-key': randomUUID() },
        body: JSON.stringify({ inputs: [{ upload_id: side.uploadId }] }),
      }),
    }),
  },
  {
    name: 'account credits',
    options: (side) => ({ url: '/v1/account/credits', headers: { 'x-api-key': side.apiKey } }),
  },
  { name: 'ledger list', options: (side) => ({ url: '/v1/account/ledger', headers: { 'x-api-key': side.apiKey } }) },
  {
    name: 'dashboard: credits (session)',
    options: (side) => ({ url: '/v1/account/credits', headers: { cookie: side.cookie } }),
  },
  {
    name: 'dashboard: 30-day chart (session)',
    options: (side) => ({ url: '/v1/account/usage?days=30', headers: { cookie: side.cookie } }),
  },
  { name: 'event list', options: (side) => ({ url: '/v1/events', headers: { 'x-api-key': side.apiKey } }) },
  { name: 'metrics scrape', options: () => ({ url: '/metrics' }) },
];

interface Measured {
  p50: number[];
  p99: number[];
}

/** Time to the stream's headers (subscribed), and with Last-Event-ID to the first replayed event. */
export function openStream(
  side: Side,
  lastEventId?: string,
): Promise<{ headersMs: number; firstEventMs: number | null }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
    const req = request(`${side.api.url}/v1/events/stream`, {
      headers: { 'x-api-key': side.apiKey, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });
    req.on('response', (response) => {
      const headersMs = ms();
      if (response.statusCode !== 200) {
        req.destroy();
        reject(new Error(`event stream: HTTP ${response.statusCode}`));
        return;
      }
      if (!lastEventId) {
        req.destroy();
        resolve({ headersMs, firstEventMs: null });
        return;
      }
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (/^id: /m.test(text)) {
          req.destroy();
          resolve({ headersMs, firstEventMs: ms() });
        }
      });
    });
    req.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
    req.end();
  });
}

/**
 * The worker's upkeep repository on the side's own connection: what is timed is the statements the
 * upkeep code issues, not copies of them that would drift (the sweeper's and the purge's did).
 */
function upkeepRepository(side: Side): ProcessingRepository {
  const connection = { query: async (sql: string, params?: unknown[]) => (await side.client.query(sql, params)).rows };
  return new ProcessingRepository(connection as unknown as DataSource);
}

/** One batch of each upkeep statement, timed on one database. */
const UPKEEP: { name: string; run: (side: Side) => Promise<unknown> }[] = [
  {
    name: 'reconciler: stale open jobs (one page)',
    run: (side) => upkeepRepository(side).staleOpenJobs('growth', 300, 100),
  },
  {
    name: `sweeper: objects in use (${UPKEEP_BATCH} keys)`,
    run: async (side) => {
      const keys = await side.client.query<{ key: string; job_id: string }>(
        `SELECT storage_key AS key, job_id FROM assets ORDER BY id DESC LIMIT $1`,
        [UPKEEP_BATCH],
      );
      return upkeepRepository(side).objectsInUse(keys.rows.map((row) => ({ key: row.key, jobId: row.job_id })));
    },
  },
  {
    name: 'purge: one batch of expired assets (rolled back)',
    run: async (side) => {
      await side.client.query('BEGIN');
      try {
        return await upkeepRepository(side).expireAssets(UPKEEP_BATCH);
      } finally {
        await side.client.query('ROLLBACK');
      }
    },
  },
];

function sideUrl(side: Side, path: string): string {
  return `${side.api.url}${path}`;
}

export async function benchGrowth(context: BenchContext): Promise<BenchResult[]> {
  const seconds = context.quick ? 1 : 3;
  const rounds = context.quick ? 2 : 4;
  // Opens per round and side: the 99th percentile of 40 was the slowest open (it ranged 0.46–2.98× from
  // run to run); of 200 it is the third slowest.
  const streamOpens = context.quick ? 10 : 200;
  const upkeepRuns = context.quick ? 5 : 15;
  const small = await growthDatabase(SMALL, context.log);
  // BENCH_GROWTH_LARGE=10k runs both sides on the small database (a check of the bench itself).
  const large = process.env.BENCH_GROWTH_LARGE === '10k' ? small : await growthDatabase(LARGE, context.log);
  context.log(
    `growth: 10k ${small.reused ? 'kept' : 'seeded now'} (seed ${small.seedSeconds} s), 10M ${large.reused ? 'kept' : 'seeded now'} (seed ${large.seedSeconds} s)`,
  );
  for (const migration of [...small.migrations, ...large.migrations])
    context.log(`growth: migration ${migration.name}: ${migration.seconds} s`);
  const clip = await sdrClip(320, 180, 1);
  const sides = [await startSide('10k', small, clip), await startSide('10M', large, clip)];
  const measured = new Map<string, Measured[]>();
  const record = (name: string, index: number, p50: number, p99: number) => {
    const entry = measured.get(name) ?? [
      { p50: [], p99: [] },
      { p50: [], p99: [] },
    ];
    entry[index].p50.push(p50);
    entry[index].p99.push(p99);
    measured.set(name, entry);
  };
  try {
    for (const path of PATHS) {
      for (const side of sides) {
        const options = path.options(side);
        await timedLoad({ ...options, url: sideUrl(side, options.url), connections: CONNECTIONS, seconds: 1 });
      }
      for (let round_ = 0; round_ < rounds; round_++) {
        // Alternate which side goes first, so neither always follows the other's load.
        const order = round_ % 2 === 0 ? [0, 1] : [1, 0];
        for (const index of order) {
          const side = sides[index];
          const options = path.options(side);
          const result = await timedLoad({
            ...options,
            url: sideUrl(side, options.url),
            connections: CONNECTIONS,
            seconds,
          });
          if (result.failures > 0)
            throw new Error(
              `growth ${path.name} (${side.label}): ${result.failures} requests failed (statuses ${JSON.stringify(result.failedStatuses)})`,
            );
          record(path.name, index, result.p50Ms, result.p99Ms);
        }
      }
      context.log(`growth: ${path.name} measured`);
    }
    // Event stream: subscribe (no history), and resume from an event five back (first replayed event).
    // Sides alternate which goes first, as the paths above do.
    for (let round_ = 0; round_ < rounds; round_++) {
      for (const index of round_ % 2 === 0 ? [0, 1] : [1, 0]) {
        const side = sides[index];
        const subscribe: number[] = [];
        const resume: number[] = [];
        for (let i = 0; i < streamOpens; i++) {
          subscribe.push((await openStream(side)).headersMs);
          resume.push((await openStream(side, side.lastEventIds[5 + (i % 100)])).firstEventMs ?? NaN);
        }
        record('event stream: subscribe', index, percentile(subscribe, 50), percentile(subscribe, 99));
        record('event stream: first event (resume)', index, percentile(resume, 50), percentile(resume, 99));
      }
    }
    context.log('growth: event stream measured');
    for (const statement of UPKEEP) {
      for (const [index, side] of sides.entries()) {
        const times: number[] = [];
        // Bounded: one that takes seconds is timed once (a statement running minutes is itself the finding).
        await side.client.query(`SET statement_timeout = '${UPKEEP_TIMEOUT_MS}ms'`);
        for (let i = 0; i <= upkeepRuns; i++) {
          const started = process.hrtime.bigint();
          const timedOut = await statement.run(side).then(
            () => false,
            (error: { code?: string }) => {
              if (error.code !== '57014') throw error;
              return true;
            },
          );
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          if (i > 0 || ms > 1000) times.push(ms);
          if (timedOut)
            context.log(`growth: upkeep ${statement.name} (${side.label}) stopped at ${UPKEEP_TIMEOUT_MS} ms`);
          if (timedOut || ms > 1000) break;
        }
        await side.client.query('RESET statement_timeout');
        record(`upkeep: ${statement.name}`, index, percentile(times, 50), percentile(times, 99));
      }
    }
  } finally {
    for (const side of sides) await stopSide(side);
  }
  const results: BenchResult[] = [];
  const lines = [
    '| path | p50 10k | p99 10k | p50 10M | p99 10M | p50 ratio | p99 ratio | met |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, [at10k, at10m]] of measured) {
    const p50Ratio = round(median(at10m.p50) / median(at10k.p50), 2);
    const p99Ratio = round(median(at10m.p99) / median(at10k.p99), 2);
    const upkeep = name.startsWith('upkeep:');
    const result = compare(
      `growth: ${name}`,
      `${name}: p50 latency on 10M jobs vs on 10k jobs (${CONNECTIONS} connections, ${rounds} alternating rounds of ${seconds} s; largest account)`,
      { metric: 'p50 ms', ours: at10m.p50, bare: at10k.p50, higherIsBetter: false },
      upkeep
        ? { text: 'timed (upkeep, no request-path target)', met: () => true }
        : { text: `p50 and p99 at 10M ≤ ${TARGET}× 10k`, met: (ratio) => ratio <= TARGET && p99Ratio <= TARGET },
      {
        p50_10k_ms: round(median(at10k.p50)),
        p99_10k_ms: round(median(at10k.p99)),
        p50_10m_ms: round(median(at10m.p50)),
        p99_10m_ms: round(median(at10m.p99)),
        p99_ratio: p99Ratio,
        seed_seconds_10m: large.seedSeconds,
        deep_rows: sides.map((side) => side.deepRows),
      },
    );
    results.push(result);
    lines.push(
      `| ${name} | ${round(median(at10k.p50))} | ${round(median(at10k.p99))} | ${round(median(at10m.p50))} | ${round(median(at10m.p99))} | ${p50Ratio} | ${p99Ratio} | ${result.met ? 'yes' : '**no**'} |`,
    );
  }
  context.log(`\n${lines.join('\n')}`);
  return results;
}
