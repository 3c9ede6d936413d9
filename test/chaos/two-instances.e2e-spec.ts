// Two API instances on one PostgreSQL database and one Redis prefix, as behind a load balancer: the
// concurrent-jobs limit (counted under the account lock in PostgreSQL) and the request rate (fixed
// 1-second windows counted in Redis) hold for the account as a whole, not per instance.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminService } from '../../src/admin/admin.service';
import { clipOfDuration } from '../fixtures/media';
import { alignToSecond, expectError, sleep } from '../support/error-checks';
import { call, startApi, type JsonResponse, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { countByStatus, createAccountOnPlan, listAll, markRegionHealthy } from '../support/chaos-accounts';

// No worker serves this region: accepted jobs stay queued, so they keep counting as running.
const REGION = 'chaos-two';

describe('two API instances sharing PostgreSQL and Redis', () => {
  let first: TestApi;
  let second: TestApi;
  /** Alternates between the two instances, like a round-robin load balancer. */
  const instance = (i: number) => (i % 2 === 0 ? first : second);

  beforeAll(async () => {
    // One storage directory, as production shares STORAGE_DIR: an upload through one instance is
    // usable through the other.
    const storage = await mkdtemp(join(tmpdir(), 'mj-chaos-two-'));
    [first, second] = await Promise.all([
      startApi({ REGION, STORAGE_DIR: storage }),
      startApi({ REGION, STORAGE_DIR: storage }),
    ]);
    expect(second.config.redisPrefix).toBe(first.config.redisPrefix);
    expect(second.config.databaseUrl).toBe(first.config.databaseUrl);
    await markRegionHealthy(first, REGION);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  it('concurrency limit: 60 submits split over both instances, exactly the plan’s 3 are accepted', async () => {
    const LIMIT = 3;
    const SUBMITS = 60;
    const account = await createAccountOnPlan(first, { requestsPerSecond: 10_000, concurrentJobs: LIMIT });
    const key = account.apiKey;
    const uploadId = await upload(first, key, await clipOfDuration(2));
    const probe = await call(second, 'POST', '/v1/sdr2hdr/jobs', { key, body: { inputs: [{ upload_id: uploadId }] } });
    expectError(second, probe, 'insufficient_credits', null);
    const cost = probe.body.error.details.required_credits as number;
    // Money for every submit: only the concurrency limit may refuse.
    await first.app.get(AdminService).grantCredits(account.accountId, cost * SUBMITS, 'enough for all');

    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: SUBMITS }, (_, i) =>
        call(instance(i), 'POST', '/v1/sdr2hdr/jobs', { key, body: { inputs: [{ upload_id: uploadId }] } }).then(
          (response) => ({ response, api: instance(i) }),
        ),
      ),
    );
    const wallMs = Date.now() - started;
    const counts = countByStatus(responses.map(({ response }) => response));
    console.log(
      JSON.stringify({
        test: 'chaos/two-instances concurrency',
        submits: SUBMITS,
        limit: LIMIT,
        statuses: counts,
        wall_ms: wallMs,
      }),
    );
    expect(counts).toEqual({ 202: LIMIT, 429: SUBMITS - LIMIT });

    for (const { response, api } of responses.filter(({ response }) => response.status === 429)) {
      expectError(api, response, 'concurrency_limit_exceeded', null);
      expect(response.body.error.details).toEqual({ concurrency_limit: LIMIT, running_jobs: LIMIT });
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Both instances refused some (each counted the other's jobs).
    const refusedBy = new Set(responses.filter(({ response }) => response.status === 429).map(({ api }) => api.url));
    expect(refusedBy.size).toBe(2);

    // What the account shows afterwards, through either instance: three queued jobs, three holds.
    const accepted = new Set(
      responses.filter(({ response }) => response.status === 202).map(({ response }) => response.body.job_id),
    );
    for (const api of [first, second]) {
      const listed = await listAll((path) => call(api, 'GET', path, { key }), '/v1/sdr2hdr/jobs');
      expect(new Set(listed.map((job) => job.job_id))).toEqual(accepted);
      expect(listed.every((job) => job.status === 'queued')).toBe(true);
      const credits = await call(api, 'GET', '/v1/account/credits', { key });
      expect(credits.body).toMatchObject({ reserved_credits: cost * LIMIT, balance_credits: cost * SUBMITS });
    }

    // Cancelling one frees one slot, seen by the other instance at once.
    const [cancelId] = accepted;
    const cancelled = await call(first, 'POST', `/v1/sdr2hdr/jobs/${cancelId}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    const again = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(instance(i + 1), 'POST', '/v1/sdr2hdr/jobs', { key, body: { inputs: [{ upload_id: uploadId }] } }),
      ),
    );
    expect(countByStatus(again)).toEqual({ 202: 1, 429: 5 });
  });

  describe('request rate', () => {
    const LIMIT = 10;
    const REQUESTS = 100;

    interface Shot {
      response: JsonResponse;
      api: TestApi;
    }

    /** Fires REQUESTS GETs at once, alternating instances, from the start of a fresh 1-second window. */
    async function burst(key: string): Promise<{ shots: Shot[]; windows: number }> {
      await alignToSecond();
      const firstWindow = Math.floor(Date.now() / 1000);
      const shots = await Promise.all(
        Array.from({ length: REQUESTS }, (_, i) =>
          call(instance(i), 'GET', '/v1/account/credits', { key }).then((response) => ({ response, api: instance(i) })),
        ),
      );
      // The API instances run in this process: one clock. Every hit was counted in a window between
      // the one the burst started in and the one it ended in.
      const windows = Math.floor(Date.now() / 1000) - firstWindow + 1;
      return { shots, windows };
    }

    it('100 GETs at once over both instances: at most 10 per 1-second window, the rest 429 with numbers to act on', async () => {
      const account = await createAccountOnPlan(first, { requestsPerSecond: LIMIT, concurrentJobs: 1 });
      const key = account.apiKey;

      let exact: Shot[] | undefined;
      const attempts: { windows: number; statuses: Record<number, number> }[] = [];
      for (let attempt = 0; attempt < 5 && !exact; attempt++) {
        const { shots, windows } = await burst(key);
        const responses = shots.map((shot) => shot.response);
        const counts = countByStatus(responses);
        attempts.push({ windows, statuses: counts });
        expect(Object.keys(counts).sort()).toEqual(['200', '429']);
        const ok = responses.filter((response) => response.status === 200);
        // Whatever the timing: a full window's worth at least, never more than the windows allow.
        expect(ok.length).toBeGreaterThanOrEqual(LIMIT);
        expect(ok.length).toBeLessThanOrEqual(LIMIT * windows);
        // Each accepted hit took its own slot of its window's shared counter: a remaining value is
        // never handed out twice in one window (a lost or per-instance count would repeat them).
        const remaining = countByStatus(
          ok.map((response) => ({ ...response, status: Number(response.headers.get('x-ratelimit-remaining')) })),
        );
        for (const [value, times] of Object.entries(remaining)) {
          expect(Number(value)).toBeGreaterThanOrEqual(0);
          expect(Number(value)).toBeLessThan(LIMIT);
          expect(times).toBeLessThanOrEqual(windows);
        }
        for (const { response, api } of shots.filter((shot) => shot.response.status === 429)) {
          expectError(api, response, 'rate_limit_exceeded', null);
          const { details } = response.body.error;
          expect(details).toEqual({ limit: LIMIT, window_seconds: 1, retry_after_seconds: 1 });
          expect(response.headers.get('retry-after')).toBe('1');
          expect(response.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
          expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
          expect(response.headers.get('x-ratelimit-reset')).toBe('1');
        }
        if (windows === 1) exact = shots;
      }
      console.log(JSON.stringify({ test: 'chaos/two-instances rate', requests: REQUESTS, limit: LIMIT, attempts }));

      // At least one burst fitted in one window: there the count is exact, over both instances.
      expect(exact).toBeDefined();
      const ok = exact!.filter((shot) => shot.response.status === 200);
      expect(ok).toHaveLength(LIMIT);
      expect(exact!.filter((shot) => shot.response.status === 429)).toHaveLength(REQUESTS - LIMIT);
      expect(
        ok.map((shot) => Number(shot.response.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b),
      ).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
      // Both instances refused part of the excess: they counted against one shared window.
      expect(new Set(exact!.filter((shot) => shot.response.status === 429).map((shot) => shot.api.url)).size).toBe(2);

      // Waiting as Retry-After says is enough, on either instance.
      await sleep(1000);
      for (const api of [first, second]) {
        const after = await call(api, 'GET', '/v1/account/credits', { key });
        expect(after.status).toBe(200);
        expect(after.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      }
    });
  });
});
