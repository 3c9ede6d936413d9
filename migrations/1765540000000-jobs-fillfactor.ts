import type { MigrationInterface, QueryRunner } from 'typeorm';

// New jobs and their items go together onto pages with room, instead of one into each hole that
// VACUUM leaves in every page of the tables. Measured on 10 million jobs (docs/explain-10m.md): rows
// of varying size leave most pages a few hundred bytes short of full; a VACUUM records that room in
// the free-space map, which then offered it to the next insert — so 1,000 jobs inserted one by one went
// onto 930–1,000 different pages, each read from outside the cache (a job insert read 19 pages), and
// the submit grew 1.25–1.4× slower at 10 million jobs than at 10,000.
//
// With a fill factor of 90 an insert only takes a page with a tenth of it free beyond the new row,
// which a page's leftover never is: 1,000 inserts filled 36 pages. Both tables are updated after the
// insert (status, billing, times), and that tenth is where a row's new version stays on its own page.
//
// A storage parameter only (SHARE UPDATE EXCLUSIVE, taken for a moment: reads and writes go on); it
// applies to pages written from now on, nothing is rewritten.
export class JobsFillfactor1765540000000 implements MigrationInterface {
  name = 'JobsFillfactor1765540000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs SET (fillfactor = 90)`);
    await q.query(`ALTER TABLE job_items SET (fillfactor = 90)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs RESET (fillfactor)`);
    await q.query(`ALTER TABLE job_items RESET (fillfactor)`);
  }
}
