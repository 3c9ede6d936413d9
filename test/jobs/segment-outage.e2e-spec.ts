// PostgreSQL unreachable at the moment a segmented item's work ends: when a segment's encoded part has
// been stored and the segment is being marked done, and when the joined output has been stored and the
// item is being ended. As for a one-pass item, the ending waits for PostgreSQL to come back instead of
// throwing the finished work away: no segment is encoded twice, the join runs once (one output object,
// none left behind), the job succeeds and is charged once.
//
// The outage is made to hit exactly there: a test connection holds a lock that the ending statement
// needs, so the worker's statement waits on it; once PostgreSQL shows it waiting, the worker's
// connections (through a loopback proxy) are cut and refused for a few seconds, then the lock goes and
// the proxy comes back. The real PostgreSQL, Redis, ffmpeg and storage folder are used throughout.
import { readdir } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { keyframedSdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { TcpProxy } from '../support/tcp-proxy';
import { startWorker, type TestWorker } from '../support/worker';

const REGION = 'seg-outage';
const GRANT = 10_000;
/** Long enough that a worker which does not wait for PostgreSQL sees it down on its first retries too. */
const OUTAGE_MS = 5000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

describe('PostgreSQL unreachable when a segmented item ends', () => {
  let storage: string;
  let proxy: TcpProxy;
  let api: TestApi;
  let worker: TestWorker;
  let account: TestAccount;
  let db: DataSource;
  let locker: Client;

  beforeAll(async () => {
    storage = await mkdtemp(join(tmpdir(), 'mj-seg-outage-'));
    proxy = await TcpProxy.start(5432);
    const direct = process.env.DATABASE_URL ?? '';
    const proxied = direct.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`);
    expect(proxied).toContain(`:${proxy.port}/`);
    api = await startApi({ STORAGE_DIR: storage });
    db = api.app.get(DataSource);
    // Only the worker reaches PostgreSQL through the proxy: the API and the test keep theirs.
    worker = await startWorker({
      REGION,
      STORAGE_DIR: storage,
      DATABASE_URL: proxied,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
      SEGMENT_SECONDS: '2',
      // One unit at a time: the segments end one after another.
      WORKER_CONCURRENCY: '1',
    });
    locker = new Client({ connectionString: direct });
    await locker.connect();
  }, 120_000);

  beforeEach(async () => {
    account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
  });

  afterAll(async () => {
    await locker?.end();
    await proxy?.reopen();
    await worker?.close();
    await api?.close();
    await proxy?.close();
    if (storage) await rm(storage, { recursive: true, force: true });
  }, 60_000);

  async function submit(): Promise<string> {
    const source = await keyframedSdrMp4({ width: 320, height: 180, seconds: 6 });
    const uploadId = await upload(api, account.apiKey, source);
    const submitted = await until(
      'the worker to make its region healthy',
      async () => {
        const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }], region: REGION },
        });
        return response.status === 503 ? undefined : response;
      },
      30_000,
    );
    expect(submitted.status).toBe(202);
    return submitted.body.job_id as string;
  }

  /** Waits until one of the worker's statements matching `pattern` waits on a lock held by `locker`. */
  async function waitForBlocked(pattern: string): Promise<void> {
    await until(
      `a worker statement like ${pattern} to wait on the test's lock`,
      async () => {
        // Not through `locker`: within its transaction PostgreSQL shows one snapshot of the activity.
        const [{ waiting }]: { waiting: number }[] = await db.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
          [pattern],
        );
        return waiting > 0 ? true : undefined;
      },
      180_000,
    );
  }

  /** PostgreSQL unreachable for the worker for OUTAGE_MS; the test's lock is let go meanwhile. */
  async function outage(): Promise<void> {
    await proxy.close();
    try {
      await sleep(500);
      await locker.query('COMMIT');
      await sleep(OUTAGE_MS);
    } finally {
      await proxy.reopen();
    }
  }

  /** The output objects stored for the job (outputs/<account>/<job>/…). */
  async function outputObjects(jobId: string): Promise<string[]> {
    const folder = join(storage, 'outputs', account.accountId, jobId);
    return (await readdir(folder).catch(() => [])).sort();
  }

  async function segmentAttempts(jobId: string): Promise<number[]> {
    const rows: { attempts: number }[] = await db.query(
      `SELECT attempts FROM item_segments WHERE job_id = $1 ORDER BY segment`,
      [jobId],
    );
    return rows.map((row) => row.attempts);
  }

  /** What every test here expects once the job is done: succeeded, charged once, one output, nothing left. */
  async function expectEndedOnce(jobId: string): Promise<void> {
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 240_000);
    expect(job).toMatchObject({ status: 'succeeded', billing: { state: 'settled', refunded: false } });
    const ledger: { kind: string }[] = await db.query(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [
      jobId,
    ]);
    expect(ledger.map((entry) => entry.kind)).toEqual(['authorise', 'capture']);
    expect(await credits(api, account.apiKey)).toMatchObject({
      reserved_credits: 0,
      balance_credits: GRANT - job.billing.charged_credits,
    });
    const events: { event: string }[] = await db.query(`SELECT event FROM outbox_events WHERE job_id = $1`, [jobId]);
    expect(events.map((row) => row.event)).toEqual(['job.succeeded']);
    // One output object and its light map, the objects the item's assets are: a join that ran twice would
    // leave more.
    const assets: { storage_key: string; content_type: string }[] = await db.query(
      `SELECT storage_key, content_type FROM assets WHERE job_id = $1`,
      [jobId],
    );
    expect(assets.map((asset) => asset.content_type).sort()).toEqual(['image/png', 'video/mp4']);
    expect(await outputObjects(jobId)).toEqual(assets.map((asset) => asset.storage_key.split('/').pop()).sort());
    const segments = join(storage, 'segments', jobId);
    await until(
      'the temporary segments to be removed',
      async () => {
        const left = await readdir(segments, { recursive: true, withFileTypes: true }).catch(() => []);
        return left.every((entry) => !entry.isFile()) ? true : undefined;
      },
      15_000,
    );
  }

  it('at the end of a segment: the worker waits for PostgreSQL, no segment is encoded twice', async () => {
    const jobId = await submit();
    await until(
      'the item to be split into segments',
      async () => ((await segmentAttempts(jobId)).length >= 2 ? true : undefined),
      180_000,
    );
    // A segment's end locks its item's row first (SegmentsRepository.endSegment): hold that lock.
    await locker.query('BEGIN');
    await locker.query(`SELECT 1 FROM job_items WHERE job_id = $1 FOR UPDATE`, [jobId]);
    await waitForBlocked('%FROM job_items%FOR UPDATE%');
    await outage();

    await expectEndedOnce(jobId);
    const attempts = await segmentAttempts(jobId);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts).toEqual(attempts.map(() => 1));
  }, 400_000);

  it("at the join's item ending: the worker waits for PostgreSQL, the join runs once and leaves one output", async () => {
    // The item's ending inserts its asset: from before the job starts, nothing may insert one.
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE assets IN SHARE MODE');
    const jobId = await submit();
    await waitForBlocked('%INSERT INTO assets%');
    await outage();

    await expectEndedOnce(jobId);
    expect(await segmentAttempts(jobId)).toEqual((await segmentAttempts(jobId)).map(() => 1));
  }, 400_000);
});
