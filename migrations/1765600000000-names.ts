import type { MigrationInterface, QueryRunner } from 'typeorm';

// Names a customer recognises instead of ids (issue 42 item 6): an API key's optional name, given on create
// or rotate, and the name of the file an upload was made from (POST /v1/uploads?filename=…), which the job
// view shows as items[i].source.filename. Both nullable, without a default: adding them rewrites no row and
// takes only a moment's lock; existing keys and uploads simply have none.
export class Names1765600000000 implements MigrationInterface {
  name = 'Names1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN name text`);
    await q.query(`ALTER TABLE uploads ADD COLUMN filename text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE uploads DROP COLUMN filename`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN name`);
  }
}
