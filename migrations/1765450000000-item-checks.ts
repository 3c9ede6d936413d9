import type { MigrationInterface, QueryRunner } from 'typeorm';

// Every output measured before it is charged (docs/api-decisions.md §12): the checks an item's output
// ran in the worker's ending, [{name, passed, expected, measured}], written in the same transaction that
// ends the item (empty until then, and for items that ended before an output existed). The measured
// properties themselves live in `output` (output.video / output.audio), as before.
export class ItemChecks1765450000000 implements MigrationInterface {
  name = 'ItemChecks1765450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE job_items ADD COLUMN checks jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE job_items DROP COLUMN checks`);
  }
}
