// Redis going away for a while under a running API (a restart, a failover, a partition) and coming
// back: once the API answers again, a submitted job is queued and starts at once, without restarting
// the API. The API's media queue has its own Redis connection, apart from the client the rest of the
// API uses; it backed off to 20 s between reconnect attempts (BullMQ's default), so after an outage of
// ~20 s submits were accepted (202) but their jobs could not be queued for up to 20 s more and waited
// for the reconciler, a minute or more, while everything else had long recovered.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, createAccount, startApi, type JsonResponse, type TestApi } from '../support/app';
import { sleep, waitUntil } from '../support/error-checks';
import { upload, waitForJob } from '../support/jobs';
import { TcpProxy } from '../support/tcp-proxy';
import { startWorker, type TestWorker } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';

/** Long enough for a connection that backs off exponentially to wait far longer than the outage's end. */
const OUTAGE_MS = 25_000;
/** The queue's connection may come back one reconnect attempt (≤ 2 s) after the API's client. */
const QUEUE_LAG_MS = 2500;
/** A queued 160×90 clip starts within seconds on an idle worker; the reconciler's path takes a minute. */
const START_MS = 15_000;

async function submit(api: TestApi, key: string, uploadId: string): Promise<JsonResponse> {
  return call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body: { inputs: [{ upload_id: uploadId }] } });
}

describe('the API queue after a Redis outage', () => {
  let proxy: TcpProxy;
  let api: TestApi;
  let worker: TestWorker;

  beforeAll(async () => {
    proxy = await TcpProxy.start(6379);
    const env = { REGION: 'requeue', STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-requeue-')) };
    // Only the API reaches Redis through the proxy: the worker stays connected, so the region stays healthy.
    api = await startApi({ ...env, REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
    worker = await startWorker({ ...env, PUBLIC_BASE_URL: api.config.publicBaseUrl, DOCS_URL: api.config.docsUrl });
  });

  afterAll(async () => {
    await proxy.reopen();
    await worker.close();
    await api.close();
    await proxy.close();
  });

  it(`a job submitted once the API answers again after ${OUTAGE_MS / 1000} s without Redis starts at once`, async () => {
    const account = await createAccount(api, { credits: 100 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90 }));
    let before = await submit(api, account.apiKey, uploadId);
    // The worker's first heartbeat makes the region healthy (503 region_unavailable until then).
    for (let i = 0; before.status === 503 && i < 50; i++) {
      await sleep(100);
      before = await submit(api, account.apiKey, uploadId);
    }
    expect(before.status).toBe(202);

    await proxy.close();
    await sleep(OUTAGE_MS);
    const during = await submit(api, account.apiKey, uploadId);
    expect(during.status).toBe(503);
    expect(during.body.error.code).toBe('service_unavailable');
    await proxy.reopen();

    // The API answers again within ~2 s of Redis coming back (outage.e2e-spec.ts); the queue's own
    // connection may reconnect one attempt (≤ 2 s) later.
    await waitUntil(
      async () => (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status === 200,
      15_000,
      200,
    );
    await sleep(QUEUE_LAG_MS);

    const after = await submit(api, account.apiKey, uploadId);
    expect(after.status).toBe(202);
    // Queued at once, not left for the reconciler (which re-enqueues it only once it is a minute stale).
    const path = `/v1/sdr2hdr/jobs/${after.body.job_id}`;
    const started = await waitForJob(api, account.apiKey, path, ['processing', 'succeeded', 'failed'], START_MS);
    expect(started.status).not.toBe('failed');
    expect((await waitForJob(api, account.apiKey, path)).status).toBe('succeeded');
  }, 120_000);
});
