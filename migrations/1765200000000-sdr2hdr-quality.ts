import type { MigrationInterface, QueryRunner } from 'typeorm';

// sdr2hdr jobs gain `output.quality` (src/media/quality-presets.ts). Jobs stored before it were
// encoded, or will be, with what is now called `balanced`: say so in their stored options, so the job
// view and the worker read one typed value and never guess. The literal is the value as of this
// migration; a later change of the default must not rewrite old jobs.
export class Sdr2HdrQuality1765200000000 implements MigrationInterface {
  name = 'Sdr2HdrQuality1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE jobs SET output_options = output_options || '{"quality":"balanced"}'::jsonb
        WHERE api = 'sdr2hdr' AND NOT output_options ? 'quality'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE jobs SET output_options = output_options - 'quality' WHERE api = 'sdr2hdr'`);
  }
}
