import type { MigrationInterface, QueryRunner } from 'typeorm';

// Two plan limits on what an account holds (issue 29 items 5 and 6), like its other limits:
// - webhook_endpoints: endpoints an account may register. Every event is sent to each subscribed endpoint
//   (and again on each redelivery), so the count bounds how many requests one event can make us send.
// - upload_storage_bytes: bytes an account may hold in live uploads (kept UPLOAD_TTL_HOURS each), so a
//   free account cannot fill the store. Free holds 1 GiB: its 60 minutes a month of 1080p fit in that.
export class PlanStorageAndEndpoints1765400000000 implements MigrationInterface {
  name = 'PlanStorageAndEndpoints1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE plans
        ADD COLUMN webhook_endpoints integer NOT NULL DEFAULT 5 CHECK (webhook_endpoints >= 0),
        ADD COLUMN upload_storage_bytes bigint NOT NULL DEFAULT 1073741824 CHECK (upload_storage_bytes >= 0)`);
    await q.query(`
      UPDATE plans SET
        webhook_endpoints = CASE id WHEN 'free' THEN 5 WHEN 'starter' THEN 10 WHEN 'pro' THEN 20
                                    WHEN 'enterprise' THEN 50 ELSE webhook_endpoints END,
        upload_storage_bytes = CASE id WHEN 'free' THEN 1073741824 WHEN 'starter' THEN 10737418240
                                       WHEN 'pro' THEN 107374182400 WHEN 'enterprise' THEN 536870912000
                                       ELSE upload_storage_bytes END`);
    // The bytes an account holds: summed over its live uploads at every upload.
    await q.query(
      `CREATE INDEX uploads_account_live_idx ON uploads (account_id, expires_at) INCLUDE (size_bytes) WHERE deleted_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX uploads_account_live_idx`);
    await q.query(`ALTER TABLE plans DROP COLUMN webhook_endpoints, DROP COLUMN upload_storage_bytes`);
  }
}
