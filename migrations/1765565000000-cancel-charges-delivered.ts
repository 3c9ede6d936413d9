import type { MigrationInterface, QueryRunner } from 'typeorm';

// A cancelled job pays for the items it delivered before the cancel (src/jobs/job-lifecycle.ts,
// billingStateAtEnd): its hold is settled for their charge and the rest released, so a cancelled job
// may now be 'settled' with a charge above 0 as well as 'released' with none. The constraint only grows
// looser, so every existing row meets it: it is added NOT VALID (a moment's lock) and validated after
// (SHARE UPDATE EXCLUSIVE: reads and writes go on while it scans).
const OPEN_AND_SUCCEEDED = `(status IN ('queued', 'processing') AND billing_state = 'authorised') OR
  (status IN ('succeeded', 'partially_succeeded') AND billing_state = 'settled')`;

export class CancelChargesDelivered1765565000000 implements MigrationInterface {
  name = 'CancelChargesDelivered1765565000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_terminal_billing`);
    await q.query(`ALTER TABLE jobs ADD CONSTRAINT jobs_terminal_billing CHECK (
      ${OPEN_AND_SUCCEEDED} OR
      (status IN ('failed', 'cancelled') AND billing_state = 'released' AND charged_credits = 0) OR
      (status = 'cancelled' AND billing_state = 'settled' AND charged_credits > 0)) NOT VALID`);
    await q.query(`ALTER TABLE jobs VALIDATE CONSTRAINT jobs_terminal_billing`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_terminal_billing`);
    await q.query(`ALTER TABLE jobs ADD CONSTRAINT jobs_terminal_billing CHECK (
      ${OPEN_AND_SUCCEEDED} OR
      (status IN ('failed', 'cancelled') AND billing_state = 'released' AND charged_credits = 0)) NOT VALID`);
  }
}
