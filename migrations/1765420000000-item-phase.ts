import type { MigrationInterface, QueryRunner } from 'typeorm';

// What a processing item is doing now (items[i].phase): encoding, joining its segments, or storing its
// output. A client shows it beside the progress, which stands still while an item joins or stores.
export class ItemPhase1765420000000 implements MigrationInterface {
  name = 'ItemPhase1765420000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE job_items ADD COLUMN phase text CHECK (phase IN ('encoding', 'joining', 'storing'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE job_items DROP COLUMN phase`);
  }
}
