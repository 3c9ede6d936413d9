// A job's items spread over the workers of its region: the real API and two worker processes. Each
// item is its own unit of queue work; the job ends exactly once with its last item, whichever worker
// runs it, also when a worker is SIGKILLed mid-item; a cancel stops every running item.
import { DataSource } from 'typeorm';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startWorkerFleet, type WorkerFleet } from '../support/worker-fleet';
import { auditMoney, pollUntil, sleep, type WorkerProcess } from '../support/processes';

const GRANT = 10_000;

describe('items of a job on many workers', () => {
  let fleet: WorkerFleet;
  let api: TestApi;
  let account: TestAccount;
  let db: DataSource;

  beforeAll(async () => {
    fleet = await startWorkerFleet('items');
    ({ api, db } = fleet);
  }, 180_000);

  // An account per test: the money audit reads the account's whole ledger.
  beforeEach(async () => {
    account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
  });

  afterAll(() => fleet?.close(), 120_000);

  const twoWorkers = (region: string) => fleet.twoWorkers(region);
  /** The item indexes whose ffmpeg runs in a worker's process group now. */
  const itemsRunning = (worker: WorkerProcess, jobId: string) =>
    fleet.ffmpegRunning(worker, new RegExp(`mediajobs-${jobId}-(\\d+)-`));
  const outboxEvents = (jobId: string) => fleet.outboxEvents(jobId);

  async function submit(region: string, inputs: string[]): Promise<string> {
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: inputs.map((uploadId) => ({ upload_id: uploadId })), region },
    });
    expect(submitted.status).toBe(202);
    return submitted.body.job_id as string;
  }

  it('a 4-item job runs on both workers and is settled exactly once', async () => {
    const region = 'items-two';
    const { ids } = await twoWorkers(region);
    const clip = await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 2, audio: false }));
    const jobId = await submit(region, [clip, clip, clip, clip]);

    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 180_000);
    expect(job).toMatchObject({ status: 'succeeded', progress: 1, billing: { state: 'settled' } });
    const workersOfItems = (job.items as { worker: string }[]).map((item) => item.worker);
    expect(new Set(workersOfItems)).toEqual(new Set(ids));
    expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.succeeded']);
    for (const item of job.items) {
      const content = await fetch(item.output.url);
      expect(content.status).toBe(200);
    }
  }, 300_000);

  it('a worker SIGKILLed mid-item: the other takes the item again, the job ends once', async () => {
    const region = 'items-kill';
    const { workers, ids } = await twoWorkers(region);
    const [doomed, survivor] = workers;
    const clip = await upload(api, account.apiKey, await sdrMp4({ width: 640, height: 360, seconds: 3, audio: false }));
    const jobId = await submit(region, [clip, clip, clip]);

    const cut = await pollUntil(
      'the first worker to run an item of the job',
      async () => {
        const running = await itemsRunning(doomed, jobId);
        return running.length ? running[0] : undefined;
      },
      60_000,
      50,
    );
    await doomed.kill();

    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 180_000);
    expect(job.status).toBe('succeeded');
    // The cut item was taken again, by the worker that lived.
    expect(job.items[cut].worker).toBe(ids[1]);
    const [{ attempts }] = await db.query(`SELECT attempts FROM job_items WHERE job_id = $1 AND index = $2`, [
      jobId,
      cut,
    ]);
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.succeeded']);
    survivor.assertAlive();
  }, 300_000);

  it('cancel stops every running item of the job within seconds; charged 0, released once', async () => {
    const region = 'items-cancel';
    const { workers } = await twoWorkers(region);
    const clip = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 1280, height: 720, seconds: 6, audio: false }),
    );
    const jobId = await submit(region, [clip, clip, clip, clip]);

    // Both workers run an item of the job.
    await pollUntil(
      'both workers to run an item of the job',
      async () => (await Promise.all(workers.map((worker) => itemsRunning(worker, jobId)))).every((run) => run.length),
      60_000,
      50,
    );
    const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, { key: account.apiKey });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', error: { code: 'job_cancelled' } });

    // Within seconds no ffmpeg of the job runs anywhere, and the items still queued never start.
    await pollUntil(
      'every ffmpeg of the job to stop',
      async () => (await Promise.all(workers.map((worker) => itemsRunning(worker, jobId)))).every((run) => !run.length),
      10_000,
      50,
    );
    await sleep(3000);
    expect(await Promise.all(workers.map((worker) => itemsRunning(worker, jobId)))).toEqual([[], []]);

    const job = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
    expect(job).toMatchObject({
      status: 'cancelled',
      billing: { charged_credits: 0, refunded: true, state: 'released' },
    });
    expect((job.items as { status: string }[]).map((item) => item.status)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
    expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await outboxEvents(jobId)).toEqual(['job.cancelled']);
    for (const worker of workers) worker.assertAlive();
  }, 300_000);
});
