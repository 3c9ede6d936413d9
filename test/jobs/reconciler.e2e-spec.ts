// The worker's reconciler re-enqueues its region's open jobs that the queue lost, however many stale
// jobs other regions have (issue 12 item 19: a dead region's 100 stale jobs used to fill its one page).
import { Queue } from 'bullmq';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mediaQueueName } from '../../src/queues/catalogue';
import { bullConnection } from '../../src/queues/drivers/bullmq-connection';
import { sdrMp4 } from '../fixtures/media';
import { createAccountOnPlan, markRegionHealthy } from '../support/chaos-accounts';
import { call, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startWorker, type TestWorker } from '../support/worker';

const LIVE = 'recon-live';
const DEAD = 'recon-dead';
const DEAD_JOBS = 120;

describe('reconciler', () => {
  let api: TestApi;
  let worker: TestWorker | undefined;
  let storage: string;

  beforeAll(async () => {
    storage = await mkdtemp(join(tmpdir(), 'mj-recon-'));
    api = await startApi({ REGION: LIVE, STORAGE_DIR: storage });
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
    await rm(storage, { recursive: true, force: true });
  });

  it(`re-enqueues its region's lost job while another region has ${DEAD_JOBS} stale jobs`, async () => {
    const account = await createAccountOnPlan(
      api,
      { requestsPerSecond: 1000, concurrentJobs: 1000 },
      { credits: 100_000 },
    );
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90, seconds: 1 }));
    const body = { inputs: [{ upload_id: uploadId }], output: { resolution: 'source' } };

    // A region whose workers all died after accepting jobs: they stay queued, and go stale.
    await markRegionHealthy(api, DEAD);
    for (let i = 0; i < DEAD_JOBS; i++) {
      const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { ...body, region: DEAD },
      });
      expect(submitted.status).toBe(202);
    }

    // This region's job, accepted after them, whose queue entry is then lost (as when Redis restarts empty).
    await markRegionHealthy(api, LIVE);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;
    const queue = new Queue(mediaQueueName(LIVE), {
      connection: bullConnection(api.config, 'producer'),
      prefix: api.config.redisPrefix,
    });
    try {
      expect(await queue.remove(jobId)).toBe(1);
    } finally {
      await queue.close();
    }

    // This region's worker starts; only its reconciler can find the job.
    worker = await startWorker({
      REGION: LIVE,
      STORAGE_DIR: storage,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
      WORKER_RECONCILE_MS: '1000',
      WORKER_STALE_JOB_SECONDS: '1',
    });
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 60_000);
    expect(job.status).toBe('succeeded');
  });
});
