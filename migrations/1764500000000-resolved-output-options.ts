import type { MigrationInterface, QueryRunner } from 'typeorm';

// Jobs store their output options resolved (every default filled in at submit; see
// src/jobs/output-options.ts), and the worker no longer applies defaults. Jobs submitted before
// this change stored only what the client sent (omitted fields, or nulls): fill in the same
// defaults, so a job queued before an upgrade runs exactly as it would have. The values are
// OUTPUT_DEFAULTS as of this migration; a later change of a default must not rewrite old jobs.
export class ResolvedOutputOptions1764500000000 implements MigrationInterface {
  name = 'ResolvedOutputOptions1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE jobs SET output_options = $1::jsonb || jsonb_strip_nulls(output_options) WHERE api = 'sdr2hdr'`,
      [JSON.stringify({ resolution: 'source', peak_nits: 1000, container: 'mp4' })],
    );
    await q.query(
      `UPDATE jobs SET output_options = $1::jsonb || jsonb_strip_nulls(output_options) WHERE api = 'audio'`,
      [JSON.stringify({ target_lufs: -16, container: 'wav' })],
    );
  }

  async down(): Promise<void> {
    // Resolved options are valid for the code before this change too: nothing to undo.
  }
}
