import type { MigrationInterface, QueryRunner } from 'typeorm';

// The indexes the worker's upkeep needs to stay bounded at millions of rows (issue 28): the retention
// purge picks expired jobs by finished_at, and each job's delete cascades to its assets (by job_id —
// without that index every deleted job scanned the assets table); the webhook event purge picks
// dispatched events by age; the storage sweeper looks live objects up by storage key; the metrics
// scrape counts disabled endpoints. Built CONCURRENTLY, so writes to these tables go on meanwhile.
const INDEXES: { name: string; definition: string }[] = [
  { name: 'jobs_retention_idx', definition: 'jobs (finished_at) WHERE finished_at IS NOT NULL' },
  { name: 'assets_job_idx', definition: 'assets (job_id)' },
  { name: 'assets_live_key_idx', definition: 'assets (storage_key) WHERE deleted_at IS NULL' },
  { name: 'uploads_live_key_idx', definition: 'uploads (storage_key) WHERE deleted_at IS NULL' },
  { name: 'outbox_dispatched_age_idx', definition: 'outbox_events (created_at) WHERE dispatched_at IS NOT NULL' },
  { name: 'webhook_endpoints_disabled_idx', definition: 'webhook_endpoints (id) WHERE disabled_at IS NOT NULL' },
];

export class UpkeepIndexes1765500000000 implements MigrationInterface {
  name = 'UpkeepIndexes1765500000000';
  // CREATE INDEX CONCURRENTLY cannot run inside a transaction (migrations/index.ts: mode 'each').
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const { name, definition } of INDEXES) {
      // An index a failed concurrent build left invalid is dropped and built again.
      const [state] = (await q.query(
        `SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = $1`,
        [name],
      )) as { valid: boolean }[];
      if (state?.valid) continue;
      if (state) await q.query(`DROP INDEX CONCURRENTLY ${name}`);
      await q.query(`CREATE INDEX CONCURRENTLY ${name} ON ${definition}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { name } of [...INDEXES].reverse()) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  }
}
