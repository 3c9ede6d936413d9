// What a processing item is doing (items[i].phase), as a client polling the job sees it: `encoding`
// while its progress moves, then (for a segmented item) `joining`, then `storing`; null while queued
// and once ended. The CLI's progress line shows it (sdk/test/cli-progress.test.ts).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, createAccount } from '../support/app';
import { upload } from '../support/jobs';
import { startStack } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';

const PHASES = ['encoding', 'joining', 'storing'];
const TERMINAL = ['succeeded', 'partially_succeeded', 'failed', 'cancelled'];

describe('items[i].phase', () => {
  it('is encoding while the item processes, never goes back, and is null while queued and once ended', async () => {
    const stack = await startStack({ REGION: 'phase', STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-phase-')) });
    try {
      const { api } = stack;
      const account = await createAccount(api, { credits: 100 });
      const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 4 }));
      let submitted;
      for (let i = 0; i < 100; i++) {
        submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }] },
        });
        if (submitted.status !== 503) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(submitted!.status).toBe(202);
      expect(submitted!.body.items[0].phase).toBeNull();

      const seen: { status: string; phase: string | null }[] = [];
      for (const deadline = Date.now() + 90_000; Date.now() < deadline;) {
        const job = await call(api, 'GET', `/v1/sdr2hdr/jobs/${submitted!.body.job_id}`, { key: account.apiKey });
        seen.push({ status: job.body.items[0].status, phase: job.body.items[0].phase });
        if (TERMINAL.includes(job.body.status)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const last = seen[seen.length - 1];
      expect(last).toEqual({ status: 'succeeded', phase: null });
      for (const view of seen) {
        if (view.status === 'processing') expect(PHASES).toContain(view.phase);
        else expect(view.phase).toBeNull();
      }
      const phases = seen.filter((view) => view.phase !== null).map((view) => PHASES.indexOf(view.phase!));
      expect(phases[0]).toBe(0);
      expect(phases).toEqual([...phases].sort((a, b) => a - b));
    } finally {
      await stack.close();
    }
  }, 120_000);
});
