// A source_url that answers the submit probe's ranged reads as usual, then sends the worker's download
// one byte now and then (issue 36, item 2): never silent long enough for the idle timeout, never done.
// The job's time limit bounds the download (the job fails `timeout`, charged 0); a cancel stops it at
// once; a worker's SIGTERM stops it and hands the item back to the queue, for another worker.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { ensureBuilt } from '../support/dist-build';
import { credits, waitForJob } from '../support/jobs';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { killAllWorkers, pollUntil, sleep, spawnWorker } from '../support/processes';
import { startStack, startWorker } from '../support/worker';

type Stack = Awaited<ReturnType<typeof startStack>>;

describe('a source that trickles its download', () => {
  let origin: MediaOrigin;
  let dir: string;

  beforeAll(async () => {
    origin = await startMediaOrigin();
    dir = await mkdtemp(join(tmpdir(), 'mj-trickle-'));
  });
  afterAll(async () => {
    await killAllWorkers();
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A source the probe reads normally and the worker's download receives a byte a second of. */
  async function tricklingSource(name: string): Promise<string> {
    origin.serve(name, await sdrMp4({ width: 160, height: 90 }));
    origin.trickle(name, 1000);
    return origin.url(name);
  }

  describe('with a worker in this process', () => {
    let stack: Stack;
    let api: TestApi;

    beforeAll(async () => {
      stack = await startStack({
        REGION: 'trickle',
        STORAGE_DIR: join(dir, 'storage'),
        ALLOW_PRIVATE_URLS: '127.0.0.1',
        JOB_TIME_LIMIT_SECONDS: '5',
      });
      api = stack.api;
    });
    afterAll(() => stack?.close());

    it('the job time limit bounds the download: the job fails timeout, charged 0, its hold released', async () => {
      const account = await createAccount(api, { credits: 100 });
      const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ source_url: await tricklingSource('limit.mp4') }] },
      });
      expect(submitted.status).toBe(202);
      const started = Date.now();
      const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, undefined, 20_000);
      process.stdout.write(`trickled download ended after ${Date.now() - started} ms (time limit 5 s)\n`);
      expect(job).toMatchObject({
        status: 'failed',
        error: { code: 'timeout', retryable: true },
        billing: { charged_credits: 0, state: 'released' },
        items: [{ status: 'failed', error: { code: 'timeout' } }],
      });
      expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 100, reserved_credits: 0 });
      await pollUntil('the source connection to close', () => origin.trickling('limit.mp4') === 0, 2000, 20);
    }, 30_000);

    it('a cancel during the download stops it within a second', async () => {
      const account = await createAccount(api, { credits: 100 });
      const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ source_url: await tricklingSource('cancel.mp4') }] },
      });
      expect(submitted.status).toBe(202);
      await pollUntil('the worker to be downloading', () => origin.trickling('cancel.mp4') === 1, 5000, 20);
      const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${submitted.body.job_id}/cancel`, {
        key: account.apiKey,
      });
      expect(cancelled.status).toBe(200);
      await pollUntil('the cancelled download to close', () => origin.trickling('cancel.mp4') === 0, 1000, 20);
      expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 100, reserved_credits: 0 });
    }, 30_000);
  });

  it('SIGTERM mid-download: the worker exits at once and hands the item back; another worker runs it', async () => {
    ensureBuilt('dist/src/worker.js');
    const env = { REGION: 'trickle-stop', STORAGE_DIR: join(dir, 'storage'), ALLOW_PRIVATE_URLS: '127.0.0.1' };
    const api = await startApi(env);
    try {
      const workerEnv = { ...env, PUBLIC_BASE_URL: api.config.publicBaseUrl, DOCS_URL: api.config.docsUrl };
      const stopping = spawnWorker(workerEnv, { logFile: join(dir, 'stopping-worker.log') });
      const account = await createAccount(api, { credits: 100 });
      const body = { inputs: [{ source_url: await tricklingSource('stop.mp4') }] };
      // 503 region_unavailable until the spawned worker's first heartbeat.
      const submitted = await pollUntil(
        'the region to take the job',
        async () => {
          stopping.assertAlive();
          const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
          return response.status === 503 ? undefined : response;
        },
        20_000,
        100,
      );
      expect(submitted.status).toBe(202);
      const path = `/v1/sdr2hdr/jobs/${submitted.body.job_id}`;
      await pollUntil('the worker to be downloading', () => origin.trickling('stop.mp4') === 1, 10_000, 20);

      const signalled = Date.now();
      process.kill(stopping.pid, 'SIGTERM');
      const exit = await Promise.race([stopping.exited, sleep(10_000).then(() => null)]);
      const exitMs = Date.now() - signalled;
      process.stdout.write(`worker exited ${exitMs} ms after SIGTERM mid-download\n`);
      expect(exit).not.toBeNull();
      expect(exitMs).toBeLessThan(5000);
      expect(origin.trickling('stop.mp4')).toBe(0);
      // Handed back, not ended: still processing, its hold still held.
      const held = await call(api, 'GET', path, { key: account.apiKey });
      expect(held.body).toMatchObject({ status: 'processing', billing: { state: 'authorised' } });

      // The source recovers; the next worker of the region takes the item from the start.
      origin.trickle('stop.mp4', 0);
      const next = await startWorker(workerEnv);
      try {
        const job = await waitForJob(api, account.apiKey, path, undefined, 60_000);
        expect(job).toMatchObject({ status: 'succeeded', billing: { state: 'settled' } });
      } finally {
        await next.close();
      }
    } finally {
      await api.close();
    }
  }, 180_000);
});
