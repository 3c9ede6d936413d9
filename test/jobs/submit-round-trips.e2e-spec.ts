// Issue 28: what one submit of a probed upload sends to PostgreSQL and Redis (bench/submits.ts measures
// its throughput against bare Fastify + pg + BullMQ). Counted on the drivers themselves while the
// request runs, so a change that adds a round trip to every submit fails here, not months later in
// a benchmark. The checks the statements carry are tested where they live (limits, money, idempotency).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { JobsFillfactor1765540000000 } from '../../migrations/1765540000000-jobs-fillfactor';
import { AdminService } from '../../src/admin/admin.service';
import type { PatchAccountDto } from '../../src/admin/dto/admin.dto';
import { call, createAccount, startApi, type JsonResponse, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { privateDatabase } from '../support/private-database';
import { sqlSentDuring, type SentStatement } from '../support/sql-sent';
import { countUsageAgain } from '../support/usage-days';
import { sdrMp4 } from '../fixtures/media';

const REGION = 'roundtrips';
/** Statements of the API's own timers (the maintenance flag, the webhook outbox), not of the request. */
const BACKGROUND = /system_settings|webhook|outbox/i;

/** The SQL statements (but the API's timers') and Redis commands every driver instance sends while `work` runs. */
async function sentDuring(
  work: () => Promise<unknown>,
): Promise<{ sql: string[]; redis: string[]; statements: SentStatement[] }> {
  const redis: string[] = [];
  const sendCommand = Redis.prototype.sendCommand;
  const redisSpy = jest.spyOn(Redis.prototype, 'sendCommand').mockImplementation(function (this: Redis, ...args) {
    redis.push(args[0].name);
    return sendCommand.apply(this, args);
  });
  try {
    const statements = (await sqlSentDuring(work)).statements.filter(({ text }) => !BACKGROUND.test(text));
    return { sql: statements.map(({ text }) => text.replace(/\s+/g, ' ').trim()), redis, statements };
  } finally {
    redisSpy.mockRestore();
  }
}

/** A statement's parameters as SQL literals, for EXECUTE. */
function literals(values: unknown[]): string {
  const literal = (value: unknown): string =>
    value === null || value === undefined
      ? 'NULL'
      : value instanceof Date
        ? `'${value.toISOString()}'`
        : typeof value === 'boolean' || typeof value === 'number'
          ? String(value)
          : Array.isArray(value)
            ? `'{${value.join(',')}}'`
            : `'${String(value).replace(/'/g, "''")}'`;
  return values.map(literal).join(', ');
}

interface PlanNode {
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
}

/**
 * The shared buffers (pages) the reads among `statements` visit, each run again under EXPLAIN (ANALYZE,
 * BUFFERS) with its own parameters, in a transaction rolled back.
 */
async function pagesRead(databaseUrl: string, statements: { text: string; values: unknown[] }[]): Promise<number> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    let pages = 0;
    for (const { text, values } of statements.filter(({ text }) => /^\s*SELECT\b/i.test(text))) {
      await db.query('BEGIN');
      try {
        const explained = await db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
          values,
        );
        const plan = explained.rows[0]['QUERY PLAN'][0].Plan;
        pages += plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
      } finally {
        await db.query('ROLLBACK');
      }
    }
    return pages;
  } finally {
    await db.end();
  }
}

describe('the round trips of one submit', () => {
  let api: TestApi;
  // A database of this file's own: the fill-factor test reads where rows lie on the tables' pages. In the
  // shared database other files insert, delete and vacuum jobs beside it, and room their rows leave on
  // pages among its old ones is rightly taken by new jobs (CI's full run of 2026-11-29: 10 of its 40).
  let database: Awaited<ReturnType<typeof privateDatabase>>;

  beforeAll(async () => {
    database = await privateDatabase('round_trips');
    api = await startApi({
      REGION,
      DATABASE_URL: database.url,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-round-trips-')),
    });
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${REGION}`, Date.now() + 3600_000, 'test-heartbeat');
    redis.disconnect();
  });
  afterAll(async () => {
    await api.close();
    await database.drop();
  });

  it('a submit of a probed upload with an Idempotency-Key: 9 statements (7 in its transaction) and 2 Redis commands', async () => {
    const account = await createAccount(api, { plan: 'enterprise' });
    await api.app.get(AdminService).grantCredits(account.accountId, 1_000_000, 'round trips');
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    const submit = (key: string) =>
      call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
        headers: { 'Idempotency-Key': key },
      });
    // The first submit probes the upload and looks the key up; the ones after are what every client repeats.
    expect((await submit('first')).status).toBe(202);
    // The region's live worker is believed for a second after it was read (region-health.ts), so the
    // submit measured follows one that read it. On a machine so loaded that a submit takes over a second
    // the measured one reads it again: a few tries, and one must show the two commands alone.
    let response: JsonResponse | undefined;
    let sent: Awaited<ReturnType<typeof sentDuring>> | undefined;
    for (let attempt = 0; attempt < 5 && (sent === undefined || sent.redis.length > 2); attempt++) {
      expect((await submit(`before-${attempt}`)).status).toBe(202);
      sent = await sentDuring(async () => (response = await submit(`measured-${attempt}`)));
      expect(response!.status).toBe(202);
      expect(sent.redis.filter((name) => name !== 'evalsha')).toEqual(
        sent.redis.length > 2 ? ['zrevrangebyscore'] : [],
      );
    }

    if (sent === undefined) throw new Error('no submit measured');
    const kinds = sent.sql.map((text) => text.split(' ').slice(0, 3).join(' '));
    expect(kinds).toEqual([
      'INSERT INTO idempotency_keys', // the key's claim (step 5)
      'SELECT id, account_id,', // the upload (step 7)
      'START TRANSACTION',
      'SELECT id, status,', // the account's row lock
      'WITH look AS', // step 8's counts
      'WITH wanted AS', // the hold and its ledger row
      'WITH job AS', // the job and its items, returned as the view
      'UPDATE idempotency_keys SET', // the stored 202, in the job's transaction
      'COMMIT',
    ]);
    // In a transaction shared with the submits that arrive with it (job-admission.ts), which waits for no
    // lock: an account whose row another transaction holds is left to a transaction of its own.
    expect(sent.sql[3]).toMatch(
      /FROM accounts WHERE id = ANY\(\$1::text\[\]\) ORDER BY id FOR NO KEY UPDATE SKIP LOCKED$/,
    );
    // The account row is changed once (the hold, which also counts the job among its open jobs): a second
    // UPDATE of a row this transaction already changed would run the accounts → plans foreign-key check
    // again, locking the plan's row FOR KEY SHARE in every submit of that plan.
    expect(sent.sql.join('\n').match(/UPDATE accounts\b/g)).toHaveLength(1);
    // The rate limit (with the failed-credential budget and the credentials version) and the queue add;
    // the upload's probe verdict is kept in the instance that probed it, and the region's live worker
    // seen by the first submit is believed for a second (region-health.ts).
    expect(sent.redis.sort()).toEqual(['evalsha', 'evalsha']);

    // The statements are named (parsed once per connection), and PostgreSQL runs a named statement
    // with a generic plan once five runs showed it no dearer: that plan, made without the parameters'
    // values, must still find the region's queued jobs through the partial index of open jobs rather
    // than by reading every job the region ever had.
    const counts = sent.statements.find(({ text }) => text.trim().startsWith('WITH look AS'))!;
    const db = new Client({ connectionString: api.config.databaseUrl });
    await db.connect();
    try {
      await db.query('SET plan_cache_mode = force_generic_plan');
      await db.query(`PREPARE step8_counts AS ${counts.text}`);
      const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE step8_counts(${literals(counts.values)})`);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toContain('jobs_open_idx');
    } finally {
      await db.end();
    }
  });

  it("reads as many pages for an account with 2,000 open jobs as for one with none (a submit's reads and the balance's)", async () => {
    const db = api.app.get(DataSource);
    const prepared = async (): Promise<{ account: TestAccount; uploadId: string }> => {
      const account = await createAccount(api, { plan: 'enterprise' });
      await api.app.get(AdminService).grantCredits(account.accountId, 1_000_000, 'pages');
      const uploadId = await upload(api, account.apiKey, await sdrMp4());
      return { account, uploadId };
    };
    // A plan whose concurrency limit 2,000 open jobs leave room under.
    await db.query(
      `INSERT INTO plans (id, requests_per_second, concurrent_jobs, processing_minutes_per_month, apis, max_output_height,
                          usd_per_credit, webhook_endpoints, upload_storage_bytes, event_streams)
       SELECT 'backlog', requests_per_second, 10000, NULL, apis, max_output_height, usd_per_credit, webhook_endpoints,
              upload_storage_bytes, event_streams
         FROM plans WHERE id = 'enterprise' ON CONFLICT (id) DO NOTHING`,
    );
    const quiet = await prepared();
    const busy = await prepared();
    for (const { account } of [quiet, busy])
      // The DTO lists the catalogue's plans; the service takes any plan row, as this test's own.
      await api.app.get(AdminService).patchAccount(account.accountId, { plan: 'backlog' as PatchAccountDto['plan'] });
    // Open jobs as a backlog leaves them: in another region, so this region's queue is the same for both.
    await db.query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits,
                         billing_state, estimated_seconds, processed_seconds, request_id)
       SELECT 'job_busy' || lpad(n::text, 6, '0'), $1, 'sdr2hdr', CASE WHEN n % 2 = 0 THEN 'queued' ELSE 'processing' END,
              'elsewhere', '{}', 0, 0, 'authorised', 1, 0, 'req_busy'
         FROM generate_series(1, 2000) AS n`,
      [busy.account.accountId],
    );
    await countUsageAgain(db, busy.account.accountId);

    const pagesOf = async ({ account, uploadId }: { account: TestAccount; uploadId: string }) => {
      const submit = () =>
        call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: { inputs: [{ upload_id: uploadId }] } });
      // The first submit probes the upload; the second is the one measured.
      const first = await submit();
      expect([first.status, first.body.error?.code]).toEqual([202, undefined]);
      let submitted: JsonResponse | undefined;
      const submitSent = await sentDuring(async () => (submitted = await submit()));
      expect(submitted!.status).toBe(202);
      let balance: JsonResponse | undefined;
      const balanceSent = await sentDuring(
        async () => (balance = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })),
      );
      expect(balance!.status).toBe(200);
      return {
        submit: await pagesRead(api.config.databaseUrl, submitSent.statements),
        balance: await pagesRead(api.config.databaseUrl, balanceSent.statements),
        runningJobs: balance!.body.running_jobs as number,
      };
    };
    const atQuiet = await pagesOf(quiet);
    const atBusy = await pagesOf(busy);
    expect([atQuiet.runningJobs, atBusy.runningJobs]).toEqual([2, 2002]);
    // A page or two of slack for an index page split by the jobs the two submits added.
    expect(atBusy.submit).toBeLessThanOrEqual(atQuiet.submit + 2);
    expect(atBusy.balance).toBeLessThanOrEqual(atQuiet.balance + 2);
  });

  it('puts new jobs and their items on new pages, not one into each hole that VACUUM left across the old ones', async () => {
    const db = api.app.get(DataSource);
    const account = await createAccount(api, { plan: 'enterprise' });
    await api.app.get(AdminService).grantCredits(account.accountId, 1_000_000, 'holes');
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    // Years of finished jobs written before the fill factor was set (the migration undone, then done
    // again): pages filled to the brim.
    const fillfactor = new JobsFillfactor1765540000000();
    const runner = db.createQueryRunner();
    await fillfactor.down(runner);
    try {
      await db.query(
        `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits,
                           billing_state, estimated_seconds, processed_seconds, request_id, finished_at)
         SELECT 'job_hole' || lpad(n::text, 6, '0'), $1, 'sdr2hdr', 'succeeded', 'elsewhere', '{}', 1, 1, 'settled', 1, 1,
                'req_holes', now()
           FROM generate_series(1, 6000) AS n`,
        [account.accountId],
      );
      await db.query(
        `INSERT INTO job_items (job_id, index, status, source, duration_seconds, estimated_credits)
         SELECT id, 0, 'succeeded', '{"type":"upload","upload_id":"upl_holes"}', 1, 1 FROM jobs WHERE request_id = 'req_holes'`,
      );
    } finally {
      // As the migration left it, whatever happened, for the tests after this one.
      await fillfactor.up(runner);
      await runner.release();
    }
    // Then two jobs of every page gone (the retention purge; an UPDATE's dead version), their items with
    // them, and a VACUUM: every old page of both tables has a hole a new row fits in, and the
    // free-space map offers each of them — as a VACUUM of 10 million jobs offered 213,000 pages.
    await db.query(`DELETE FROM jobs WHERE request_id = 'req_holes' AND (ctid::text::point)[1] IN (1, 2)`);
    await db.query('VACUUM jobs, job_items');
    const submitted: string[] = [];
    for (let n = 0; n < 40; n++) {
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      expect(response.status).toBe(202);
      submitted.push(response.body.job_id as string);
    }
    // Into the holes, each new row went to an old page of its own, one no recent request had read (at 10
    // million jobs, a read from outside the cache per insert: docs/explain-10m.md). With room kept free,
    // they go where the last writes went: none onto the old pages, bar the last, which was still filling.
    const intoOldPages = async (table: 'jobs' | 'job_items', column: string): Promise<number> => {
      const [{ count }] = await db.query<{ count: number }[]>(
        `WITH old AS (SELECT DISTINCT (ctid::text::point)[0] AS page FROM ${table} WHERE ${column} LIKE 'job_hole%')
         SELECT count(*)::int AS count FROM ${table}
          WHERE ${column} = ANY($1)
            AND (ctid::text::point)[0] IN (SELECT page FROM old WHERE page < (SELECT max(page) FROM old))`,
        [submitted],
      );
      return count;
    };
    expect({ jobs: await intoOldPages('jobs', 'id'), job_items: await intoOldPages('job_items', 'job_id') }).toEqual({
      jobs: 0,
      job_items: 0,
    });
  });
});
