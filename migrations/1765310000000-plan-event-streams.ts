import type { MigrationInterface, QueryRunner } from 'typeorm';

// A plan's limit on open event streams (GET /v1/events/stream) per account: each open stream holds a
// connection and a place on the shared event feed, so a plan bounds them like its other limits.
export class PlanEventStreams1765310000000 implements MigrationInterface {
  name = 'PlanEventStreams1765310000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE plans ADD COLUMN event_streams integer NOT NULL DEFAULT 2 CHECK (event_streams >= 0)`);
    await q.query(`
      UPDATE plans SET event_streams = CASE id WHEN 'free' THEN 2 WHEN 'starter' THEN 5 WHEN 'pro' THEN 20
                                                WHEN 'enterprise' THEN 100 ELSE event_streams END`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE plans DROP COLUMN event_streams`);
  }
}
