import type { MigrationInterface, QueryRunner } from 'typeorm';

// The storage sweeper asks, for a batch of stored objects, whether a live asset or upload still points
// at each (src/processing/processing.repository.ts objectsInUse). Without an index on storage_key each
// key scanned every live asset: a batch of 1,000 keys ran for minutes at 1.2 million assets
// (docs/explain-10m.md). Partial (deleted_at IS NULL), as the question is; CONCURRENTLY, outside a
// transaction (migrations/index.ts MIGRATIONS_TRANSACTION_MODE).
export class LiveStorageKeysIndex1765520000000 implements MigrationInterface {
  name = 'LiveStorageKeysIndex1765520000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS assets_live_storage_key_idx ON assets (storage_key) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS uploads_live_storage_key_idx ON uploads (storage_key) WHERE deleted_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS uploads_live_storage_key_idx`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS assets_live_storage_key_idx`);
  }
}
