import type { MigrationInterface, QueryRunner } from 'typeorm';

// Jobs carry the spec the worker makes their items by (jobs.output_spec, src/media/output-spec.ts):
// written by the submit from the resolved options, every choice filled in (the x265 preset and CRF of
// the quality, the target lines of the resolution, HLG's reference peak), so no layer below the submit
// applies a default. Jobs stored before it get theirs here, as the code of this migration's time
// resolved them, so a job queued before an upgrade runs exactly as it would have:
// - sdr2hdr options gain `mapping` and `transfer` where they predate them (`reference`, `pq`), so the
//   stored options are complete too (every sdr2hdr row, as the earlier option migrations did);
// - open jobs (queued or processing: the only ones a worker still takes) get their spec. An ended job's
//   stays null: nothing makes its items again, and a 10-million-row table is not rewritten for it.
// The literals are the values as of this migration; a later change of a default must not rewrite old jobs.
export class JobOutputSpec1765610000000 implements MigrationInterface {
  name = 'JobOutputSpec1765610000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs ADD COLUMN output_spec jsonb`);
    await q.query(
      `UPDATE jobs SET output_options = '{"mapping":"reference","transfer":"pq"}'::jsonb || output_options
        WHERE api = 'sdr2hdr' AND NOT (output_options ? 'mapping' AND output_options ? 'transfer')`,
    );
    await q.query(
      `UPDATE jobs SET output_spec = jsonb_build_object(
           'api', 'sdr2hdr',
           'container', output_options->>'container',
           'targetLines', CASE output_options->>'resolution' WHEN '720p' THEN 720 WHEN '1080p' THEN 1080 WHEN '2160p' THEN 2160 END,
           'mapping', output_options->>'mapping',
           'transfer', output_options->>'transfer',
           'peakNits', CASE WHEN output_options->>'transfer' = 'hlg' THEN 1000 ELSE (output_options->>'peak_nits')::int END,
           'quality', output_options->>'quality',
           'preset', CASE output_options->>'quality' WHEN 'fast' THEN 'ultrafast' WHEN 'best' THEN 'medium' ELSE 'veryfast' END,
           'crf', CASE output_options->>'quality' WHEN 'best' THEN 10 ELSE 12 END)
        WHERE api = 'sdr2hdr' AND status IN ('queued', 'processing')`,
    );
    await q.query(
      `UPDATE jobs SET output_spec = jsonb_build_object(
           'api', 'audio',
           'container', output_options->>'container',
           'targetLufs', (output_options->>'target_lufs')::numeric)
        WHERE api = 'audio' AND status IN ('queued', 'processing')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // The options' mapping and transfer stay: complete options are valid for the code before this too.
    await q.query(`ALTER TABLE jobs DROP COLUMN output_spec`);
  }
}
