import type { MigrationInterface, QueryRunner } from 'typeorm';

// Each item of a job is its own unit of queue work (src/common/queues.ts, PROCESS_ITEM), so an item
// records what its job used to: which worker ran it (`worker`, an opaque id shown as items[i].worker),
// how often a worker took it (`attempts`) and how far it is (`progress`, 0..1; the job's progress is
// the duration-weighted mean of its items'). Existing rows: not run by a recorded worker, not taken.
export class ItemWorker1764750000000 implements MigrationInterface {
  name = 'ItemWorker1764750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE job_items
        ADD COLUMN worker text,
        ADD COLUMN attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN progress real NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE job_items DROP COLUMN progress, DROP COLUMN attempts, DROP COLUMN worker`);
  }
}
