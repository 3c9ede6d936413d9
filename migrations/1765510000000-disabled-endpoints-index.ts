import type { MigrationInterface, QueryRunner } from 'typeorm';

// Every metrics scrape counts the disabled webhook endpoints (src/webhooks/webhooks.repository.ts
// backlog); without an index that is a sequential scan of every endpoint of every account (15 ms at
// 130,000 endpoints, docs/explain-10m.md). Few are ever disabled: a partial index holds only those.
// CONCURRENTLY, outside a transaction (migrations/index.ts MIGRATIONS_TRANSACTION_MODE).
export class DisabledEndpointsIndex1765510000000 implements MigrationInterface {
  name = 'DisabledEndpointsIndex1765510000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_endpoints_disabled_idx
         ON webhook_endpoints (disabled_at) WHERE disabled_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_endpoints_disabled_idx`);
  }
}
