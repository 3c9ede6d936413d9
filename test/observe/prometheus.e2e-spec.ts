// The metrics, proven with a real Prometheus (issue 15): Debian's prometheus scrapes the API and two
// worker processes on loopback every second; one job succeeds, one fails with out_of_memory, and a
// webhook receiver fails its first request. PromQL through Prometheus's HTTP API must then agree with
// what happened: jobs finished by status and code, credits captured equal to the ledger, delivery
// attempts by outcome. The file has its own database and Redis prefix, so its counts are only its own.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { killAllWorkers, pollUntil, snapshotApp, spawnWorker } from '../support/processes';
import { call, createAccount, freePort, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { privateDatabase } from '../support/private-database';
import { dashboardExpressions, startPrometheus, type PromSample, type TestPrometheus } from '../support/prometheus';
import { registerEndpoint, startReceiver, type Receiver } from '../support/webhook-receiver';
import { clipOfDuration, sdrMp4 } from '../fixtures/media';

const TOKEN = 'prometheus-test-token-9b2c41';
const REGION = 'prom';

/** `{label value: sample value}` of a query whose series differ in one label. */
function byLabel(samples: PromSample[], label: string): Record<string, number> {
  return Object.fromEntries(samples.map((sample) => [sample.metric[label] ?? '', sample.value]));
}

describe('Prometheus scrapes the API and two workers', () => {
  let database: { url: string; drop(): Promise<void> };
  let api: TestApi;
  let prometheus: TestPrometheus;
  let receiver: Receiver;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-prom-test-'));
    database = await privateDatabase('prom');
    const env = {
      DATABASE_URL: database.url,
      REDIS_PREFIX: `mjprom${process.pid}`,
      STORAGE_DIR: join(dir, 'storage'),
      REGION,
      METRICS_TOKEN: TOKEN,
      WEBHOOK_RETRY_SCHEDULE: '0,1,1',
    };
    api = await startApi(env);
    const app = await snapshotApp(dir);
    const workerPorts = [await freePort(), await freePort()];
    for (const [index, port] of workerPorts.entries()) {
      spawnWorker(
        {
          ...env,
          PUBLIC_BASE_URL: api.config.publicBaseUrl,
          DOCS_URL: api.config.docsUrl,
          WORKER_METRICS_PORT: String(port),
          WORKER_CONCURRENCY: '1',
          // 160×90 runs, 320×180 fails with out_of_memory.
          WORKER_MAX_PIXELS: String(320 * 180 - 1),
        },
        { app, logFile: join(dir, `worker-${index}.log`) },
      );
    }
    prometheus = await startPrometheus([
      { name: 'api', targets: [new URL(api.url).host], bearerToken: TOKEN },
      { name: 'worker', targets: workerPorts.map((port) => `127.0.0.1:${port}`), bearerToken: TOKEN },
    ]);
    receiver = await startReceiver({ status: 500 });
  }, 180_000);

  afterAll(async () => {
    await killAllWorkers();
    await prometheus?.close();
    await receiver?.stop();
    await api?.close();
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Polls a query until `check` accepts its samples (Prometheus sees a change one scrape later). */
  async function eventually(promql: string, check: (samples: PromSample[]) => boolean): Promise<PromSample[]> {
    let last: PromSample[] = [];
    try {
      return await pollUntil(
        promql,
        async () => {
          last = await prometheus.query(promql);
          return check(last) ? last : undefined;
        },
        30_000,
        500,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; last answer: ${JSON.stringify(last)}\n${prometheus.log()}`);
    }
  }

  it('sees every target up, then jobs, money and webhook attempts as they happened', async () => {
    // 1. All three targets are scraped (the bearer token works) and both workers are alive in the region.
    await eventually('up', (samples) => samples.length === 3 && samples.every((sample) => sample.value === 1));
    await eventually(`mediajobs_region_workers{region="${REGION}"}`, (s) => s.length === 1 && s[0].value === 2);

    // 2. A webhook endpoint whose receiver fails its first request (500), then answers 200.
    const account = await createAccount(api, { credits: 10_000 });
    await registerEndpoint(api, account.apiKey, receiver.url(), ['job.succeeded', 'job.failed']);

    // 3. One job that succeeds and one that fails with a known code (more pixels than WORKER_MAX_PIXELS).
    const submit = async (path: string) => {
      const uploadId = await upload(api, account.apiKey, path);
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }], region: REGION },
      });
      expect([response.status, response.body.error?.code]).toEqual([202, undefined]);
      return response.body.job_id as string;
    };
    const ids = [await submit(await clipOfDuration(2)), await submit(await sdrMp4())];
    const [good, bad] = await Promise.all(
      ids.map((id) => waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${id}`, undefined, 120_000)),
    );
    expect(good.status).toBe('succeeded');
    expect(bad).toMatchObject({ status: 'failed', error: { code: 'out_of_memory' } });
    await pollUntil('both events delivered', () => receiver.received.length >= 3, 30_000);

    // 4. Jobs finished by status and code, and submitted, as PromQL sums over the API and both workers.
    const finished = await eventually(
      'sum by (status, code) (mediajobs_jobs_finished_total)',
      (samples) => samples.reduce((sum, sample) => sum + sample.value, 0) === 2,
    );
    expect(
      Object.fromEntries(finished.map((sample) => [`${sample.metric.status}/${sample.metric.code}`, sample.value])),
    ).toEqual({ 'succeeded/none': 1, 'failed/out_of_memory': 1 });
    expect(byLabel(await prometheus.query('sum by (api) (mediajobs_jobs_submitted_total)'), 'api')).toEqual({
      sdr2hdr: 2,
    });
    expect(byLabel(await prometheus.query('sum(mediajobs_queue_wait_seconds_count)'), '')).toEqual({ '': 2 });
    expect(byLabel(await prometheus.query('sum(mediajobs_job_duration_seconds_count)'), '')).toEqual({ '': 2 });
    expect(byLabel(await prometheus.query('sum by (outcome) (mediajobs_job_items_total)'), 'outcome')).toEqual({
      succeeded: 1,
      failed: 1,
    });
    const speed = await prometheus.query('sum(mediajobs_encode_speed_ratio_count)');
    expect(speed[0]?.value).toBe(1);

    // 5. Money: captured equals the ledger's captures; authorised = captured + released; nothing left open.
    const ledger = await api.app
      .get(DataSource)
      .query(
        `SELECT kind, sum(credits)::float8 AS credits FROM credit_ledger WHERE account_id = $1 AND job_id IS NOT NULL GROUP BY kind`,
        [account.accountId],
      );
    const fromLedger = Object.fromEntries(
      (ledger as { kind: string; credits: number }[]).map((entry) => [entry.kind, entry.credits]),
    );
    expect(fromLedger.capture).toBeGreaterThan(0);
    const credits = byLabel(
      await eventually('sum by (movement) (mediajobs_credits_total)', (s) => s.length === 3),
      'movement',
    );
    expect(credits).toEqual({
      authorised: fromLedger.authorise,
      captured: fromLedger.capture,
      released: fromLedger.release,
    });
    expect(credits.authorised).toBe(credits.captured + credits.released);
    await eventually('mediajobs_holds_open', (s) => s.length === 1 && s[0].value === 0);

    // 6. Webhook attempts by outcome: the receiver's one 500, then two 2xx; nothing pending.
    const attempts = await eventually(
      'sum by (outcome) (mediajobs_webhook_attempts_total)',
      (samples) => samples.reduce((sum, sample) => sum + sample.value, 0) === 3,
    );
    expect(byLabel(attempts, 'outcome')).toEqual({ '5xx': 1, '2xx': 2 });
    // Three requests: the first (whichever event it carried) answered 500 and was retried.
    const events = receiver.received.map((request) => JSON.parse(request.body).event as string);
    expect(events).toHaveLength(3);
    expect(new Set(events)).toEqual(new Set(['job.succeeded', 'job.failed']));
    await eventually('sum(mediajobs_webhook_delivery_lag_seconds_count)', (s) => s[0]?.value === 2);
    await eventually('mediajobs_webhook_deliveries_pending', (s) => s[0]?.value === 0);

    // 7. The queries the Grafana dashboard runs answer (API latency by route from the histogram).
    const p99 = await prometheus.query(
      'histogram_quantile(0.99, sum by (le, route) (rate(mediajobs_http_request_duration_seconds_bucket[1m])))',
    );
    expect(p99.map((sample) => sample.metric.route)).toContain('/v1/sdr2hdr/jobs/:job_id');

    // 8. Every query of the Grafana dashboard (ops/grafana) is valid PromQL here; the main panels have data
    // (a rate needs two scrapes of a counter after it changed: polled until it has them).
    const expressions = await dashboardExpressions();
    for (const { expr } of expressions) await prometheus.query(expr.replaceAll('$__rate_interval', '1m'));
    const main = [
      'Jobs finished by status',
      'Queue depth by region and state',
      'Workers per region',
      'Credits per hour',
      'Webhook success rate',
      'API latency p50 / p99 by route',
    ];
    for (const title of main) {
      const { expr } = expressions.find((entry) => entry.title === title)!;
      await eventually(expr.replaceAll('$__rate_interval', '1m'), (samples) => samples.length > 0);
    }
  });
});
