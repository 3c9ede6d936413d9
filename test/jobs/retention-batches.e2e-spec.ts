// Retention at scale (issue 28): the worker's purges work in batches of UPKEEP_BATCH_SIZE, each its own
// short transaction with a pause after it, so a backlog of expired jobs, events and deliveries larger
// than a batch goes entirely, batch by batch, while job reads and submits are answered promptly.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher';
import { sdrMp4 } from '../fixtures/media';
import { call, startApi, type TestApi } from '../support/app';
import { createAccountOnPlan, markRegionHealthy } from '../support/chaos-accounts';
import { seededLeft, seedExpiredJobs } from '../support/expired-jobs';
import { upload } from '../support/jobs';
import { logMeasurement, sleep, timedCall } from '../support/processes';
import { startWorker, type TestWorker } from '../support/worker';

const LIVE = 'purge-live';
const BATCH = 200;
const EXPIRED = 1000;

describe('retention purge in batches', () => {
  let api: TestApi;
  let worker: TestWorker;
  let storage: string;
  let db: DataSource;
  let account: Awaited<ReturnType<typeof createAccountOnPlan>>;

  beforeAll(async () => {
    storage = await mkdtemp(join(tmpdir(), 'mj-purge-'));
    api = await startApi({ REGION: LIVE, STORAGE_DIR: storage });
    // Its own region: this worker takes none of the submits below, it only purges.
    worker = await startWorker({
      REGION: 'purge-idle',
      STORAGE_DIR: storage,
      UPKEEP_BATCH_SIZE: String(BATCH),
      UPKEEP_BATCH_PAUSE_MS: '100',
    });
    db = api.app.get(DataSource);
    account = await createAccountOnPlan(api, { requestsPerSecond: 1000, concurrentJobs: 1000 }, { credits: 100_000 });
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
    await rm(storage, { recursive: true, force: true });
  });

  /** Runs `purge` while sampling what is left every 10 ms: every count seen, from first to last. */
  async function watch<T>(tag: string, purge: () => Promise<T>): Promise<{ result: T; seen: number[][] }> {
    const seen: number[][] = [];
    let done = false;
    const sampling = (async () => {
      while (!done) {
        const left = await seededLeft((sql, params) => db.query(sql, params), tag);
        seen.push([left.jobs, left.events]);
        await sleep(10);
      }
    })();
    try {
      return { result: await purge(), seen };
    } finally {
      done = true;
      await sampling;
    }
  }

  it(`purges ${EXPIRED} expired jobs with their items, events and deliveries in batches of ${BATCH}, committed one by one`, async () => {
    const tag = 'batches';
    await seedExpiredJobs((sql, params) => db.query(sql, params), {
      accountId: account.accountId,
      tag,
      count: EXPIRED,
    });
    // One of them finished a day within retention: it stays.
    await db.query(`UPDATE jobs SET finished_at = now() - interval '29 days' WHERE id = 'job_xbatches_1'`);

    const jobs = await watch(tag, () => worker.app.get(RetentionPurge).purge());
    expect(jobs.result.jobs.done).toBeGreaterThanOrEqual(EXPIRED - 1);
    expect(jobs.result.jobs.batches).toBeGreaterThanOrEqual(Math.ceil((EXPIRED - 1) / BATCH));
    // Each batch committed on its own: counts between "all" and "none" were visible while it ran.
    const jobsSeen = new Set(jobs.seen.map(([left]) => left).filter((left) => left > 0 && left < EXPIRED));
    expect(jobsSeen.size).toBeGreaterThanOrEqual(2);
    expect(await seededLeft((sql, params) => db.query(sql, params), tag)).toEqual({ jobs: 1, events: EXPIRED });
    const left = await db.query(
      `SELECT (SELECT count(*) FROM job_items WHERE job_id LIKE 'job\\_xbatches\\_%')::int AS items,
              (SELECT count(*) FROM assets WHERE job_id LIKE 'job\\_xbatches\\_%')::int AS assets`,
    );
    expect(left).toEqual([{ items: 2, assets: 1 }]);

    // The events (with their deliveries and attempts) go by the webhook event purge, in batches too.
    const events = await watch(tag, () => worker.app.get(WebhookDispatcher).purge());
    expect(events.result.done).toBeGreaterThanOrEqual(EXPIRED);
    expect(events.result.batches).toBeGreaterThanOrEqual(Math.ceil(EXPIRED / BATCH));
    const eventsSeen = new Set(events.seen.map(([, left]) => left).filter((left) => left > 0 && left < EXPIRED));
    expect(eventsSeen.size).toBeGreaterThanOrEqual(2);
    expect(await seededLeft((sql, params) => db.query(sql, params), tag)).toEqual({ jobs: 1, events: 0 });
    const deliveries = await db.query(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE id LIKE 'dlv\\_xbatches\\_%')::int AS deliveries,
              (SELECT count(*) FROM webhook_attempts WHERE delivery_id LIKE 'dlv\\_xbatches\\_%')::int AS attempts`,
    );
    expect(deliveries).toEqual([{ deliveries: 0, attempts: 0 }]);
  });

  it('a job read and a submit made during the purge are answered promptly', async () => {
    await markRegionHealthy(api, LIVE);
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90, seconds: 1 }));
    const body = { inputs: [{ upload_id: uploadId }], output: { resolution: 'source' } };
    const first = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
    expect(first.status).toBe(202);
    const tag = 'during';
    // Enough for 15 batches (≥ 1.5 s of purging with its pauses): the requests land inside it even on a busy machine.
    const expired = 3 * EXPIRED;
    await seedExpiredJobs((sql, params) => db.query(sql, params), {
      accountId: account.accountId,
      tag,
      count: expired,
    });

    const purging = worker.app.get(RetentionPurge).purge();
    // Into the purge: some batches committed, more to come.
    for (;;) {
      const left = await seededLeft((sql, params) => db.query(sql, params), tag);
      if (left.jobs < expired) break;
      await sleep(5);
    }
    const read = await timedCall(api.url, 'GET', `/v1/sdr2hdr/jobs/${first.body.job_id}`, { key: account.apiKey });
    const submit = await timedCall(api.url, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
    const leftAfter = await seededLeft((sql, params) => db.query(sql, params), tag);
    const purged = await purging;

    logMeasurement('requests during the retention purge', {
      read_ms: read.ms,
      submit_ms: submit.ms,
      jobs_left_when_answered: leftAfter.jobs,
      purge_batches: purged.jobs.batches,
    });
    expect(read.status).toBe(200);
    expect(submit.status).toBe(202);
    // Answered while the purge still had work left: neither waited for it to end.
    expect(leftAfter.jobs).toBeGreaterThan(0);
    expect(read.ms).toBeLessThan(1000);
    expect(submit.ms).toBeLessThan(1000);
    expect(await seededLeft((sql, params) => db.query(sql, params), tag)).toMatchObject({ jobs: 0 });
  });
});
