// Jobs stored before jobs.output_spec existed (migrations/1765610000000-job-output-spec.ts): their open
// jobs get the spec the submit of today writes for the same options (outputSpec), field for field, so a
// job queued before an upgrade is made exactly as one submitted after it; their options gain the mapping
// and transfer they predate; ended jobs keep no spec (they never run again).
import { outputSpec, storedOutput, storedSpec } from '../../src/jobs/output-options';
import type { OutputSpec } from '../../src/media/output-spec';
import type { JobApi } from '../../src/jobs/job-api';
import type { OutputOptions } from '../../src/jobs/output-options';
import { databaseBeforeMigration } from '../support/private-database';

/** Options as jobs of each era stored them (the resolved options of 1764500000000 and later). */
const LEGACY: { id: string; api: JobApi; status: string; options: Record<string, unknown> }[] = [
  {
    id: 'job_spec_plain',
    api: 'sdr2hdr',
    status: 'queued',
    options: { resolution: 'source', peak_nits: 1000, container: 'mp4', quality: 'balanced' },
  },
  {
    id: 'job_spec_720',
    api: 'sdr2hdr',
    status: 'processing',
    options: { resolution: '720p', peak_nits: 600, container: 'mov', quality: 'fast' },
  },
  {
    id: 'job_spec_best',
    api: 'sdr2hdr',
    status: 'queued',
    options: { resolution: '2160p', peak_nits: 4000, container: 'mp4', quality: 'best', mapping: 'expand' },
  },
  {
    id: 'job_spec_hlg',
    api: 'sdr2hdr',
    status: 'queued',
    options: {
      resolution: '1080p',
      peak_nits: null,
      container: 'mp4',
      quality: 'balanced',
      mapping: 'expand',
      transfer: 'hlg',
    },
  },
  { id: 'job_spec_audio', api: 'audio', status: 'queued', options: { target_lufs: -23.5, container: 'm4a' } },
  {
    id: 'job_spec_ended',
    api: 'sdr2hdr',
    status: 'succeeded',
    options: { resolution: 'source', peak_nits: 1000, container: 'mp4', quality: 'balanced' },
  },
];

describe('the output-spec migration', () => {
  it('gives the open jobs of a database from before it the spec a submit writes today', async () => {
    const { source, close } = await databaseBeforeMigration('output_spec_migration', 'JobOutputSpec1765610000000');
    try {
      await source.query(`INSERT INTO accounts (id, name, plan_id) VALUES ('acct_spec_mig', 'm', 'pro')`);
      for (const job of LEGACY) {
        await source.query(
          `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits,
                             billing_state, processed_seconds, request_id, finished_at)
           VALUES ($1, 'acct_spec_mig', $2, $3, 'r', $4, 0, 0, $5, 0, 'req_spec_mig',
                   CASE WHEN $3 IN ('queued', 'processing') THEN NULL ELSE now() END)`,
          [
            job.id,
            job.api,
            job.status,
            JSON.stringify(job.options),
            job.status === 'succeeded' ? 'settled' : 'authorised',
          ],
        );
      }
      await source.runMigrations({ transaction: 'each' });

      const stored: { id: string; api: JobApi; output_options: OutputOptions; output_spec: OutputSpec | null }[] =
        await source.query(
          `SELECT id, api, output_options, output_spec FROM jobs WHERE id LIKE 'job_spec_%' ORDER BY id`,
        );
      const byId = new Map(stored.map((row) => [row.id, row]));
      for (const job of LEGACY.filter((legacy) => legacy.status !== 'succeeded')) {
        const row = byId.get(job.id)!;
        // Read as the worker reads it: a spec from before packages names none, and storedSpec reads it as a file.
        expect({ id: job.id, spec: storedSpec(row) }).toEqual({ id: job.id, spec: outputSpec(storedOutput(row)) });
      }
      expect(byId.get('job_spec_ended')!.output_spec).toBeNull();
      // The options are complete: what predates mapping and transfer reads as what it was made with.
      expect(byId.get('job_spec_plain')!.output_options).toMatchObject({ mapping: 'reference', transfer: 'pq' });
      expect(byId.get('job_spec_best')!.output_options).toMatchObject({ mapping: 'expand', transfer: 'pq' });
      expect(byId.get('job_spec_hlg')!.output_spec).toMatchObject({
        transfer: 'hlg',
        peakNits: 1000,
        targetLines: 1080,
      });
      expect(byId.get('job_spec_720')!.output_spec).toMatchObject({ preset: 'ultrafast', crf: 12, targetLines: 720 });
    } finally {
      await close();
    }
  });
});
