import type { MigrationInterface, QueryRunner } from 'typeorm';

// Indexes the request paths need once an account holds millions of jobs (docs/explain-10m.md, measured
// on 10 million jobs). Built CONCURRENTLY: no lock that stops submits while they build, so this
// migration runs outside a transaction (every runner applies migrations in mode 'each', see
// migrations/index.ts). IF NOT EXISTS / IF EXISTS: a build interrupted half-way leaves an INVALID index
// behind, which `down` then `up` replaces.
//
// jobs_account_created_idx: processing time this billing period (account credits, the submit's quota
// check) sums this period's jobs of the account; the only index led by account_id that fits was
// (account_id, finished_at), so the statement read every job the account ever had. The INCLUDEd
// columns are the ones it sums, so it reads the index alone.
export class GrowthIndexes1765510000000 implements MigrationInterface {
  name = 'GrowthIndexes1765510000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS jobs_account_created_idx
         ON jobs (account_id, created_at) INCLUDE (status, estimated_seconds, processed_seconds)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS jobs_account_created_idx`);
  }
}
