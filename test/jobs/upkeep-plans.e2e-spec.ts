// Background upkeep stays bounded as the tables grow (issue 28): every statement the retention purge,
// the webhook event purge, the storage sweeper, the reconciler and the metrics scrape send — and the
// deletes their cascades run — has an index path, so none has to read a whole large table. Checked on
// the statements the real repositories send, planned on a database of 20,000 expired jobs (with
// items, assets, events, deliveries; a tenth of the assets live) and 20,000 uploads and idempotency keys with sequential scans and hash/merge joins
// priced out (as tables of millions of rows would price them): a plan that still scans a table sequentially has no index to use, and one
// that reads a whole index (no condition on its leading column) is no better — unless the index holds
// only work in flight (IN_FLIGHT_INDEXES), whose size the backlog bounds, not the years of history.
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { JobsRepository } from '../../src/jobs/jobs.repository';
import { ProcessingRepository } from '../../src/processing/processing.repository';
import { WebhookDeliveryRepository } from '../../src/webhooks/webhook-delivery.repository';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { seedExpiredJobs } from '../support/expired-jobs';
import { privateDatabase } from '../support/private-database';

const LARGE_TABLES = [
  'jobs',
  'job_items',
  'item_segments',
  'assets',
  'uploads',
  'idempotency_keys',
  'outbox_events',
  'webhook_deliveries',
  'webhook_attempts',
  'webhook_endpoints',
];

/** Partial indexes of what is open or pending: reading one whole is reading the backlog, not history. */
const IN_FLIGHT_INDEXES = [
  'jobs_open_idx',
  'jobs_active_idx',
  'webhook_deliveries_due_idx',
  'outbox_undispatched_idx',
  'webhook_endpoints_disabled_idx',
];

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** The whole-table reads of a plan: `Seq Scan on <table>`, or an index read without a condition on its leading column. */
function wholeReads(node: PlanNode, leading: Map<string, string>): string[] {
  const own: string[] = [];
  if (node['Node Type'] === 'Seq Scan' && LARGE_TABLES.includes(node['Relation Name'] ?? ''))
    own.push(`Seq Scan on ${node['Relation Name']}`);
  const index = node['Index Name'];
  if (
    index &&
    !IN_FLIGHT_INDEXES.includes(index) &&
    !new RegExp(`\\b${leading.get(index)}\\b`).test(node['Index Cond'] ?? '')
  )
    own.push(`${index} read whole`);
  return [...own, ...(node.Plans ?? []).flatMap((child) => wholeReads(child, leading))];
}

describe('upkeep statements use indexes', () => {
  let db: DataSource;
  const sent: { sql: string; params: unknown[] }[] = [];
  /** The test database as the repositories see it, recording each statement they send. */
  let recording: DataSource;

  let database: Awaited<ReturnType<typeof privateDatabase>>;

  beforeAll(async () => {
    database = await privateDatabase('upkeep_plans');
    db = new DataSource({ type: 'postgres', url: database.url, migrations: MIGRATIONS });
    await db.initialize();
    await db.query(`INSERT INTO accounts (id, name, plan_id) VALUES ('acct_plans', 'plans', 'pro')`);
    await seedExpiredJobs((sql, params) => db.query(sql, params), {
      accountId: 'acct_plans',
      tag: 'plans',
      count: 20_000,
    });
    await db.query(`UPDATE assets SET deleted_at = NULL, expires_at = now() + interval '1 day' WHERE id LIKE '%0'`);
    await db.query(`INSERT INTO uploads (id, account_id, storage_key, size_bytes, sha256, expires_at, deleted_at)
                    SELECT 'upl_' || g, 'acct_plans', 'uploads/acct_plans/upl_' || g, 1000, 'x', now() - interval '1 day',
                           CASE WHEN g % 10 = 0 THEN NULL ELSE now() END
                      FROM generate_series(1, 20000) g`);
    await db.query(`INSERT INTO idempotency_keys (account_id, key, request_hash, state, expires_at)
                    SELECT 'acct_plans', 'key-' || g, 'x', 'done', now() + (g % 48 - 24) * interval '1 hour'
                      FROM generate_series(1, 20000) g`);
    await db.query('ANALYZE');
    // Both ways a repository sends SQL: DataSource.query, and the pool itself (src/common/database/sql.ts).
    const record = <T extends object>(target: T, key: string, wrap: (value: unknown) => unknown): T =>
      new Proxy(target, {
        get: (object, property, receiver) => {
          const value: unknown = Reflect.get(object, property, receiver);
          return property === key ? wrap(value) : value;
        },
      });
    const pool = (db.driver as unknown as { master: { query(...args: unknown[]): unknown } }).master;
    const recordingPool = record(
      pool,
      'query',
      () => (query: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
        const sql = typeof query === 'string' ? query : query.text;
        sent.push({ sql, params: (typeof query === 'string' ? values : query.values) ?? [] });
        return pool.query(query, values);
      },
    );
    const driver = record(db.driver, 'master', () => recordingPool);
    recording = record(
      record(db, 'driver', () => driver),
      'query',
      () =>
        (sql: string, params: unknown[] = []) => {
          sent.push({ sql, params });
          return db.query(sql, params);
        },
    );
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  async function planOf(sql: string, params: unknown[]): Promise<string[]> {
    const indexes = (await db.query(
      `SELECT c.relname AS index, a.attname AS leading
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]`,
    )) as { index: string; leading: string }[];
    const leading = new Map(indexes.map((entry) => [entry.index, entry.leading]));
    return db.transaction(async (manager) => {
      // As the planner prices a large table: no reading it whole, and a join looks rows up by index.
      await manager.query('SET LOCAL enable_seqscan = off');
      await manager.query('SET LOCAL enable_hashjoin = off');
      await manager.query('SET LOCAL enable_mergejoin = off');
      const [{ 'QUERY PLAN': plan }] = (await manager.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)) as {
        'QUERY PLAN': { Plan: PlanNode }[];
      }[];
      return wholeReads(plan[0].Plan, leading);
    });
  }

  it('the purges, the sweeper, the reconciler and the metrics scrape', async () => {
    const processing = new ProcessingRepository(recording);
    const webhooks = new WebhooksRepository(recording);
    await processing.expireAssets(10);
    await processing.expireUploads(10);
    await processing.deleteExpiredJobs(30, 10);
    await processing.deleteExpiredIdempotencyKeys(10);
    await new WebhookDeliveryRepository(recording).purgeEvents(30, 10);
    await processing.objectsInUse([
      { key: 'outputs/acct_1/job_1/0.mp4', jobId: 'job_1' },
      { key: 'uploads/acct_1/upl_1', jobId: null },
    ]);
    await processing.staleOpenJobs('local', 60, 100);
    await new JobsRepository(recording).openHolds();
    await webhooks.backlog();
    expect(sent.length).toBe(9);

    const scans: Record<string, string[]> = {};
    for (const { sql, params } of sent) scans[sql.replace(/\s+/g, ' ').slice(0, 90)] = await planOf(sql, params);
    // What each ON DELETE CASCADE runs per deleted row (a job's items, segments and assets; an event's
    // deliveries; a delivery's attempts).
    const cascades: [string, unknown[]][] = [
      ['DELETE FROM ONLY job_items WHERE $1 = job_id', ['job_1']],
      ['DELETE FROM ONLY item_segments WHERE $1 = job_id AND $2 = item_index', ['job_1', 0]],
      ['DELETE FROM ONLY assets WHERE $1 = job_id', ['job_1']],
      ['DELETE FROM ONLY webhook_deliveries WHERE $1 = event_id', ['evt_1']],
      ['DELETE FROM ONLY webhook_attempts WHERE $1 = delivery_id', ['dlv_1']],
    ];
    for (const [sql, params] of cascades) scans[sql] = await planOf(sql, params);
    expect(Object.entries(scans).filter(([, tables]) => tables.length > 0)).toEqual([]);
  });
});
