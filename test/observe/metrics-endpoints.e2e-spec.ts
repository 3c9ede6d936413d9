// The metrics endpoints (issue 15, docs/api-decisions.md §11): the worker's own /metrics port, METRICS_TOKEN on API
// and worker, and the scrape-time gauges of the API (queue depth per region, open holds) against a
// job that stays queued (no worker consumes its region; its heartbeat is written by hand).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { parseConfig } from '../../src/common/config/config';
import { WorkerMetricsServer } from '../../src/metrics/worker-metrics-server';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';
import { upload } from '../support/jobs';
import { startWorker, type TestWorker } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';

const TOKEN = 'observe-metrics-token-5d1e';

/** The value of one sample line (`name{labels} value`), 0 when absent. */
export function sample(metrics: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`));
    if (ok) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('metrics endpoints', () => {
  let api: TestApi;
  let worker: TestWorker;
  let workerUrl: string;
  const region = `obs${process.pid}`;

  beforeAll(async () => {
    const storage = await mkdtemp(join(tmpdir(), 'mj-observe-'));
    api = await startApi({ METRICS_TOKEN: TOKEN, STORAGE_DIR: storage });
    // The worker serves another region, so the job submitted below stays queued in `region`.
    worker = await startWorker({
      METRICS_TOKEN: TOKEN,
      WORKER_METRICS_PORT: '0',
      STORAGE_DIR: storage,
      REGION: `${region}w`,
    });
    const address = worker.app.get(WorkerMetricsServer).address()!;
    workerUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
  });

  it('the worker serves GET /metrics on its own port, only with the bearer token', async () => {
    expect((await fetch(`${workerUrl}/metrics`)).status).toBe(401);
    expect(
      (await fetch(`${workerUrl}/metrics`, { headers: { authorization: 'Bearer wrong-token-000000' } })).status,
    ).toBe(401);
    const response = await fetch(`${workerUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await response.text();
    for (const series of [
      '# TYPE mediajobs_jobs_finished_total counter',
      '# TYPE mediajobs_job_duration_seconds histogram',
      '# TYPE mediajobs_jobs_running gauge',
      '# TYPE mediajobs_webhook_attempts_total counter',
      '# TYPE mediajobs_credits_total counter',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      expect(body).toContain(series);
    expect((await fetch(`${workerUrl}/`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });

  it("every other answer of the worker's port is the error envelope (issue 29 item 10), as the API's", async () => {
    const get = async (path: string, init: RequestInit = {}) => {
      const response = await fetch(`${workerUrl}${path}`, init);
      const text = await response.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text: the assertions below then fail on it
      }
      return { status: response.status, headers: response.headers, body };
    };
    const auth = { authorization: `Bearer ${TOKEN}` };
    expectError(worker, await get('/', { headers: auth }), 'route_not_found', null);
    expectError(worker, await get('/metrics/extra?x=1', { headers: auth }), 'route_not_found', null);
    const post = await get('/metrics', { method: 'POST', headers: auth, body: 'x' });
    expectError(worker, post, 'method_not_allowed', null);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expectError(worker, await get('/metrics'), 'missing_api_key', 'Authorization');
    expectError(
      worker,
      await get('/metrics', { headers: { authorization: 'Bearer wrong-token-000000' } }),
      'invalid_api_key',
      'Authorization',
    );
  });

  it("the API's /metrics needs the token too (the error envelope says how to send it)", async () => {
    const missing = await call(api, 'GET', '/metrics');
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 'missing_api_key', param: 'Authorization' });
    const wrong = await call(api, 'GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-000000' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatchObject({ code: 'invalid_api_key' });
    expect((await call(api, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('a queued job shows in the queue depth of its region, its hold in the open holds and authorised credits', async () => {
    const read = async () =>
      (await call(api, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).body as string;
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${region}`, Date.now() + 3600_000, 'test-heartbeat');
    await redis.sadd(`${api.config.redisPrefix}:regions`, region);
    redis.disconnect();

    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    const before = await read();
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], region },
    });
    expect(submitted.status).toBe(202);
    // The ledger's authorise line is the hold.
    const held = submitted.body.billing.estimated_credits as number;
    await new Promise((resolve) => setTimeout(resolve, 1100)); // one scrape's reads are shared for 1 s
    const after = await read();

    expect(sample(after, 'mediajobs_queue_jobs', { region, state: 'waiting' })).toBe(1);
    expect(sample(after, 'mediajobs_queue_jobs', { region, state: 'active' })).toBe(0);
    expect(sample(after, 'mediajobs_queue_oldest_waiting_seconds', { region })).toBeGreaterThan(0);
    expect(sample(after, 'mediajobs_region_workers', { region })).toBe(1);
    expect(sample(after, 'mediajobs_holds_open')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'mediajobs_holds_oldest_age_seconds')).toBeGreaterThan(0);
    expect(
      sample(after, 'mediajobs_credits_total', { movement: 'authorised' }) -
        sample(before, 'mediajobs_credits_total', { movement: 'authorised' }),
    ).toBe(held);
    expect(
      sample(after, 'mediajobs_jobs_submitted_total', { api: 'sdr2hdr' }) -
        sample(before, 'mediajobs_jobs_submitted_total', { api: 'sdr2hdr' }),
    ).toBe(1);
    expect(after).toContain('mediajobs_webhook_deliveries_pending');
  });

  it('production without METRICS_TOKEN keeps the worker endpoint on loopback (config refuses 0.0.0.0)', () => {
    const env = {
      ...process.env,
      NODE_ENV: 'production',
      ASSET_URL_SECRET: 'x'.repeat(32),
      METRICS_TOKEN: '',
      ALLOW_PRIVATE_URLS: '', // the test default (port-less loopback) is refused in production
    };
    expect(() => parseConfig({ ...env, WORKER_METRICS_PORT: '9464', WORKER_METRICS_HOST: '0.0.0.0' })).toThrow(
      /WORKER_METRICS_HOST=0\.0\.0\.0 exposes metrics beyond loopback: set METRICS_TOKEN/,
    );
    expect(parseConfig({ ...env, WORKER_METRICS_PORT: '9464' })).toMatchObject({
      workerMetricsPort: 9464,
      workerMetricsHost: '127.0.0.1',
    });
    expect(
      parseConfig({ ...env, WORKER_METRICS_PORT: '9464', WORKER_METRICS_HOST: '0.0.0.0', METRICS_TOKEN: TOKEN }),
    ).toMatchObject({ workerMetricsHost: '0.0.0.0', metricsToken: TOKEN });
    expect(parseConfig({ ...env }).workerMetricsPort).toBeNull();
  });
});
