// A job's items end on their own, on any worker; the job ends exactly once, with its last item — even
// when two items end at the same instant, a unit runs twice, or a worker dies inside the ending
// transaction. Real API (to submit), real PostgreSQL; the items' ends are the lifecycle's own calls,
// released together by a barrier (a third connection holding the job's row lock).
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { JobLifecycle, type ItemEnding } from '../../src/jobs/job-lifecycle';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { credits, upload } from '../support/jobs';
import { createAccountOnPlan, markRegionHealthy } from '../support/chaos-accounts';

const REGION = 'item-end';

describe('the end of a job whose items end on different workers', () => {
  let api: TestApi;
  let account: TestAccount;
  let uploadId: string;
  let lifecycle: JobLifecycle;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi({ REGION });
    // No worker runs here: the test plays the workers, so the region only needs to look healthy.
    await markRegionHealthy(api, REGION);
    account = await createAccount(api, { credits: 1000 });
    uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90, seconds: 1, audio: false }));
    lifecycle = api.app.get(JobLifecycle);
    db = api.app.get(DataSource);
  });

  afterAll(async () => {
    await api?.close();
  });

  /** A submitted job with `count` items, each taken by its own (pretend) worker. */
  async function takenJob(count: number) {
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: Array.from({ length: count }, () => ({ upload_id: uploadId })) },
    });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;
    const taken = [];
    for (let index = 0; index < count; index++) {
      const item = await lifecycle.takeItem(jobId, index, `wkr_test${index}`);
      expect(item).not.toBeNull();
      taken.push(item!);
    }
    return { jobId, job: taken[0].job, items: taken.map((entry) => entry.item) };
  }

  function succeeded(index: number, estimated: string): ItemEnding {
    return {
      index,
      status: 'succeeded',
      chargedCredits: Number(estimated),
      processedSeconds: 1,
      error: null,
      asset: null,
    };
  }

  const openBarriers = new Set<Client>();

  // A failed test must not leave a barrier holding its job's lock (and its waiters waiting).
  afterEach(async () => {
    for (const client of openBarriers) await client.end();
    openBarriers.clear();
  });

  /** Holds the job's row lock until release(): calls that end its items queue up behind it. */
  async function barrier(jobId: string) {
    const client = new Client({ connectionString: api.config.databaseUrl });
    await client.connect();
    openBarriers.add(client);
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE', [jobId]);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pid = rows[0].pid;
    return {
      /**
       * Resolves with the sessions waiting at this barrier once there are `count` of them: blocked by
       * it, or queued behind the first waiter for the same row (blocked by that one).
       */
      async waiting(count: number): Promise<number[]> {
        const deadline = Date.now() + 60_000;
        for (;;) {
          // This client is inside its transaction, where PostgreSQL keeps the first reading of
          // pg_stat_activity until the transaction ends: a session that connected after it would never
          // show up. Clearing the snapshot makes each poll a fresh reading.
          await client.query('SELECT pg_stat_clear_snapshot()');
          const { rows: waiters } = await client.query<{ pid: number }>(
            `WITH direct AS (SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)))
             SELECT pid FROM pg_stat_activity
              WHERE pid IN (SELECT pid FROM direct) OR pg_blocking_pids(pid) && ARRAY(SELECT pid FROM direct)`,
            [pid],
          );
          if (waiters.length >= count) return waiters.map((waiter) => waiter.pid);
          if (Date.now() > deadline) throw new Error(`fewer than ${count} sessions ever waited at the barrier`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      },
      async release(): Promise<void> {
        openBarriers.delete(client);
        await client.query('COMMIT');
        await client.end();
      },
    };
  }

  async function ledgerOf(jobId: string): Promise<string[]> {
    const rows: { kind: string }[] = await db.query(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [
      jobId,
    ]);
    return rows.map((row) => row.kind);
  }

  async function eventsOf(jobId: string): Promise<string[]> {
    const rows: { event: string }[] = await db.query(`SELECT event FROM outbox_events WHERE job_id = $1`, [jobId]);
    return rows.map((row) => row.event);
  }

  it('two last items ending at the same instant end the job once: one capture, one event', async () => {
    for (let round = 0; round < 5; round++) {
      const { jobId, job, items } = await takenJob(2);
      const gate = await barrier(jobId);
      const ends = items.map((item) => lifecycle.endItems(job, [succeeded(item.index, item.estimated_credits)]));
      await gate.waiting(2);
      await gate.release();
      const results = await Promise.all(ends);

      expect(results.map((result) => result.itemsEnded)).toEqual([[0], [1]]);
      expect(results.filter((result) => result.jobEnded)).toHaveLength(1);
      const view = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
      const estimate = items.reduce((sum, item) => sum + Number(item.estimated_credits), 0);
      expect(view).toMatchObject({
        status: 'succeeded',
        progress: 1,
        billing: { state: 'settled', charged_credits: estimate },
        items: [
          { status: 'succeeded', worker: 'wkr_test0' },
          { status: 'succeeded', worker: 'wkr_test1' },
        ],
      });
      expect(await ledgerOf(jobId)).toEqual(['authorise', 'capture']);
      expect(await eventsOf(jobId)).toEqual(['job.succeeded']);
    }
    expect(await credits(api, account.apiKey)).toMatchObject({ reserved_credits: 0 });
  });

  it('the same item ended twice at once (a duplicated unit) is ended once; the job waits for its other item', async () => {
    const { jobId, job, items } = await takenJob(2);
    const gate = await barrier(jobId);
    const ending = succeeded(0, items[0].estimated_credits);
    const ends = [lifecycle.endItems(job, [ending]), lifecycle.endItems(job, [ending])];
    await gate.waiting(2);
    await gate.release();
    const results = await Promise.all(ends);
    expect(results.map((result) => result.itemsEnded).sort()).toEqual([[], [0]]);
    expect(results.some((result) => result.jobEnded)).toBe(false);

    const view = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
    expect(view).toMatchObject({ status: 'processing', items: [{ status: 'succeeded' }, { status: 'processing' }] });
    // One of two equal items done: the job's progress is half.
    expect(view.progress).toBe(0.5);
    expect(await ledgerOf(jobId)).toEqual(['authorise']);

    const last = await lifecycle.endItems(job, [succeeded(1, items[1].estimated_credits)]);
    // The call that ended the job says how: the settlement planned under the job's lock (src/jobs/settlement.ts).
    expect(last).toEqual({
      itemsEnded: [1],
      jobEnded: true,
      ending: expect.objectContaining({ status: 'succeeded', chargedCredits: 2, event: 'job.succeeded' }),
    });
    expect(await ledgerOf(jobId)).toEqual(['authorise', 'capture']);
  });

  it('a worker that dies inside the ending transaction leaves the job open; the retried item ends it once', async () => {
    const { jobId, job, items } = await takenJob(2);
    await lifecycle.endItems(job, [succeeded(0, items[0].estimated_credits)]);

    // The last item's ending waits at the barrier; its connection is then cut, as when its worker dies.
    const gate = await barrier(jobId);
    const dying = lifecycle.endItems(job, [succeeded(1, items[1].estimated_credits)]);
    const [victim] = await gate.waiting(1);
    await db.query('SELECT pg_terminate_backend($1)', [victim]);
    await gate.release();
    await expect(dying).rejects.toThrow();

    const open = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
    expect(open).toMatchObject({ status: 'processing', billing: { state: 'authorised' } });
    expect(open.items[1].status).toBe('processing');
    expect(await ledgerOf(jobId)).toEqual(['authorise']);

    // BullMQ hands the unit to another worker, which takes the item again and ends it — and the job.
    const again = await lifecycle.takeItem(jobId, 1, 'wkr_test9');
    expect(again).not.toBeNull();
    expect(await lifecycle.endItems(job, [succeeded(1, items[1].estimated_credits)])).toEqual({
      itemsEnded: [1],
      jobEnded: true,
      ending: expect.objectContaining({ status: 'succeeded', chargedCredits: 2 }),
    });
    // A late duplicate of the dead worker's unit changes nothing.
    expect(await lifecycle.endItems(job, [succeeded(1, items[1].estimated_credits)])).toEqual({
      itemsEnded: [],
      jobEnded: false,
    });
    const view = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
    expect(view).toMatchObject({ status: 'succeeded', items: [{ worker: 'wkr_test0' }, { worker: 'wkr_test9' }] });
    expect(await ledgerOf(jobId)).toEqual(['authorise', 'capture']);
    expect(await eventsOf(jobId)).toEqual(['job.succeeded']);
  });

  it('the concurrency limit counts jobs, not items (docs/api-decisions.md §4)', async () => {
    const limited = await createAccountOnPlan(api, { requestsPerSecond: 100, concurrentJobs: 2 }, { credits: 1000 });
    const limitedUpload = await upload(
      api,
      limited.apiKey,
      await sdrMp4({ width: 160, height: 90, seconds: 1, audio: false }),
    );
    const submit = () =>
      call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: limited.apiKey,
        body: { inputs: Array.from({ length: 4 }, () => ({ upload_id: limitedUpload })) },
      });
    const first = await submit();
    const second = await submit();
    expect([first.status, second.status]).toEqual([202, 202]);
    // Eight items, four of them running on four (pretend) workers: still two jobs.
    let job = null;
    for (const index of [0, 1, 2, 3]) job = (await lifecycle.takeItem(first.body.job_id, index, `wkr_c${index}`))!.job;
    const refused = await submit();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: 'concurrency_limit_exceeded',
      details: { concurrency_limit: 2, running_jobs: 2 },
    });

    // The slot frees when the job's last item ends, not before.
    const items = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${first.body.job_id}`, { key: limited.apiKey })).body
      .items as { index: number; estimated_credits: number }[];
    for (const item of items.slice(0, 3)) {
      await lifecycle.endItems(job!, [succeeded(item.index, String(item.estimated_credits))]);
    }
    expect((await submit()).status).toBe(429);
    await lifecycle.endItems(job!, [succeeded(3, String(items[3].estimated_credits))]);
    expect((await submit()).status).toBe(202);
  });

  it('an item ending after the job was cancelled changes nothing: released once, no capture', async () => {
    const { jobId, job, items } = await takenJob(2);
    const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, { key: account.apiKey });
    expect(cancelled.status).toBe(200);
    const late = await Promise.all(
      items.map((item) => lifecycle.endItems(job, [succeeded(item.index, item.estimated_credits)])),
    );
    expect(late).toEqual([
      { itemsEnded: [], jobEnded: false },
      { itemsEnded: [], jobEnded: false },
    ]);
    const view = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
    expect(view).toMatchObject({
      status: 'cancelled',
      billing: { state: 'released', charged_credits: 0 },
      items: [{ status: 'cancelled' }, { status: 'cancelled' }],
    });
    expect(await ledgerOf(jobId)).toEqual(['authorise', 'release']);
  });
});
