// Redis and PostgreSQL restarted under a steady load (submits, reads, jobs processing). The shared
// servers stay untouched: this file runs its own redis-server (no persistence, so a restart loses every
// key, queues included) and its own PostgreSQL cluster, and points an API and a worker process at them.
// While a dependency is down every request answers quickly, with a 503 service_unavailable envelope;
// after the restart the same API and worker recover by themselves; and nothing is lost: every job
// accepted reaches a terminal status (those waiting in the wiped queue included) and every job's
// terminal event reaches the webhook receiver.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { openJobStatuses } from '../../src/jobs/job-lifecycle';
import { sdrMp4 } from '../fixtures/media';
import { createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import {
  isTerminal,
  cleanUpEach,
  killAllWorkers,
  listAll,
  logMeasurement,
  pollUntil,
  snapshotApp,
  PrivateCluster,
  PrivateRedis,
  sleep,
  spawnWorker,
  timedCall,
  WebhookSink,
  type TimedResponse,
  type WorkerProcess,
} from '../support/processes';

const REGION = 'chaos-outage';
/** Every request must come back within this, outage or not. */
const BOUND_MS = 5000;
/** A dependency stays down at least this long (and until requests have seen it). */
const MIN_OUTAGE_MS = 3000;
/** After a restart the service answers normally again within this, without being restarted. */
const RECOVERY_MS = 10_000;
/**
 * The steady load keeps at most this many of its jobs open, as a client bound by its own concurrency does:
 * on a loaded machine the worker's two slots finish fewer jobs than a submit every 600 ms starts, and an
 * open-ended backlog would reach the plan's concurrency limit (429) and outlast any drain.
 */
const MAX_OPEN_JOBS = 8;
/** The drain fails as soon as no job has reached a terminal status for this long: a lost job, not a slow one. */
const DRAIN_STALL_MS = 60_000;

type Phase = 'baseline' | 'redis-down' | 'redis-back' | 'postgres-down' | 'postgres-back';

interface Sample extends TimedResponse {
  phase: Phase;
  kind: 'submit' | 'read-credits' | 'read-job';
}

/**
 * A steady load: a submit every 600 ms while fewer than MAX_OPEN_JOBS of the account's jobs are open (or
 * always, while `uncapped`), a read every 150 ms (credits, or the latest accepted job).
 */
class Load {
  readonly samples: Sample[] = [];
  readonly accepted = new Map<string, Phase>();
  phase: Phase = 'baseline';
  /** Submits every 600 ms whatever the backlog: while recovery is timed, a submit must be tried at that pace. */
  uncapped = false;
  private stopped = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly api: TestApi,
    private readonly key: string,
    private readonly submitBody: unknown,
    /** The account's open jobs, read from the database; throws while PostgreSQL is down. */
    private readonly openJobs: () => Promise<number>,
  ) {}

  start(): void {
    this.loops = [this.loop(600, () => this.steadySubmit()), this.loop(150, (i) => this.read(i))];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  async submit(phase = this.phase): Promise<Sample> {
    const response = await timedCall(this.api.url, 'POST', '/v1/sdr2hdr/jobs', {
      key: this.key,
      body: this.submitBody,
    });
    const sample = { ...response, phase, kind: 'submit' as const };
    this.samples.push(sample);
    if (response.status === 202) this.accepted.set(response.body.job_id, phase);
    return sample;
  }

  private async steadySubmit(): Promise<void> {
    // While PostgreSQL is down the count fails; the submit is sent, and its 503 is part of the load.
    const open = this.uncapped ? 0 : await this.openJobs().catch(() => 0);
    if (open < MAX_OPEN_JOBS) await this.submit();
  }

  since(at: number, kind?: Sample['kind']): Sample[] {
    return this.samples.filter((sample) => sample.startedAt >= at && (!kind || sample.kind === kind));
  }

  private async read(i: number): Promise<void> {
    const latest = [...this.accepted.keys()].pop();
    const jobRead = i % 2 === 1 && latest;
    const path = jobRead ? `/v1/sdr2hdr/jobs/${latest}` : '/v1/account/credits';
    const phase = this.phase;
    const response = await timedCall(this.api.url, 'GET', path, { key: this.key });
    this.samples.push({ ...response, phase, kind: jobRead ? 'read-job' : 'read-credits' });
  }

  private async loop(everyMs: number, task: (i: number) => Promise<unknown>): Promise<void> {
    for (let i = 0; !this.stopped; i++) {
      const next = Date.now() + everyMs;
      await task(i);
      await sleep(Math.max(0, next - Date.now()));
    }
  }
}

/** Seconds from `from` (ms) to an ISO time, one decimal. */
function since(from: number, iso: string | null): number {
  return iso === null ? NaN : Math.round((Date.parse(iso) - from) / 100) / 10;
}

function summary(sample: Sample): string {
  return `${sample.kind} ${sample.phase} → ${sample.status} ${sample.body?.error?.code ?? ''} ${sample.ms} ms ${sample.networkError ?? ''}`;
}

describe('Redis and PostgreSQL restarted under load', () => {
  let redis: PrivateRedis | undefined;
  let cluster: PrivateCluster | undefined;
  let api: TestApi | undefined;
  let worker: WorkerProcess | undefined;
  let sink: WebhookSink | undefined;
  let load: Load | undefined;
  let storage: string | undefined;

  afterAll(() =>
    cleanUpEach([
      () => load?.stop(),
      () => killAllWorkers(),
      () => api?.close(),
      () => sink?.close(),
      () => redis?.dispose(),
      () => cluster?.drop(),
      () => (storage ? rm(storage, { recursive: true, force: true }) : undefined),
    ]),
  );

  it('answers 503 service_unavailable fast while one is down, recovers by itself, loses no job or event', async () => {
    const started = Date.now();
    storage = await mkdtemp(join(tmpdir(), 'mj-chaos-outage-'));
    const app = await snapshotApp(storage);
    [redis, cluster] = await Promise.all([PrivateRedis.start(), PrivateCluster.create()]);
    const env = {
      REGION,
      STORAGE_DIR: storage,
      DATABASE_URL: cluster.url(),
      REDIS_URL: redis.url,
      WEBHOOK_RETRY_SCHEDULE: '0,1,1,2,3,5,8',
    };
    api = await startApi(env);
    worker = spawnWorker(
      {
        ...env,
        PUBLIC_BASE_URL: api.config.publicBaseUrl,
        DOCS_URL: api.config.docsUrl,
        WORKER_CONCURRENCY: '2',
        WORKER_LOCK_MS: '3000',
        // Jobs whose queue entry died with Redis are re-enqueued within seconds, not minutes.
        WORKER_RECONCILE_MS: '1000',
        WORKER_STALE_JOB_SECONDS: '5',
      },
      { logFile: join(storage, 'worker.log'), app },
    );
    const account: TestAccount = await createAccount(api, { plan: 'enterprise', credits: 100_000 });
    sink = await WebhookSink.start();
    const registered = await timedCall(api.url, 'POST', '/v1/webhook-endpoints', {
      key: account.apiKey,
      body: { url: sink.url() },
    });
    expect(registered.status).toBe(201);
    const secret = registered.body.secret as string;
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90, seconds: 1 }));
    const body = { inputs: [{ upload_id: uploadId }], output: { resolution: 'source' } };
    const db = api.app.get(DataSource);
    const setupMs = Date.now() - started;

    const openJobs = async (): Promise<number> => {
      const [row] = await db.query(
        `SELECT count(*)::int AS open FROM jobs WHERE account_id = $1 AND status = ANY ($2)`,
        [account.accountId, openJobStatuses()],
      );
      return row.open;
    };
    const traffic = new Load(api, account.apiKey, body, openJobs);
    load = traffic;
    // The region is up once the worker's first heartbeat is in Redis.
    const first = await pollUntil(
      'the first submit to be accepted',
      async () => {
        worker!.assertAlive();
        const response = await timedCall(api!.url, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
        return response.status === 202 ? response : undefined;
      },
      30_000,
    );
    traffic.accepted.set(first.body.job_id, 'baseline');
    traffic.start();
    await pollUntil(
      'a job to succeed under load',
      async () => {
        const done = await timedCall(api!.url, 'GET', '/v1/sdr2hdr/jobs?status=succeeded&limit=1', {
          key: account.apiKey,
        });
        return traffic.accepted.size >= 3 && done.status === 200 && done.body.data.length > 0;
      },
      60_000,
    );

    /** Submits a burst that the two job slots cannot start at once, so some wait in the queue when the outage hits. */
    async function burst(phase: Phase): Promise<{ ids: string[]; queuedAtOutage: string[] }> {
      const responses = await Promise.all(Array.from({ length: 6 }, () => traffic.submit(phase)));
      expect(responses.map(summary).filter((line) => !line.includes('→ 202 '))).toEqual([]);
      const ids = responses.map((response) => response.body.job_id as string);
      const rows: { id: string }[] = await db.query(`SELECT id FROM jobs WHERE id = ANY ($1) AND status = 'queued'`, [
        ids,
      ]);
      return { ids, queuedAtOutage: rows.map((row) => row.id) };
    }

    /** Holds the outage until it lasted MIN_OUTAGE_MS and the load has seen it; returns when it began. */
    async function holdOutage(from: number, what: string): Promise<void> {
      await pollUntil(
        `${what}: requests to see the outage`,
        () =>
          Date.now() - from >= MIN_OUTAGE_MS && traffic.since(from + 100).filter((s) => s.status === 503).length >= 5,
        30_000,
        50,
      );
    }

    /** How long after `from` the first submit and the first credits read succeeded again. */
    async function recovery(from: number, what: string): Promise<{ reads_ms: number; submits_ms: number }> {
      const firstOk = (kind: Sample['kind'], status: number) =>
        traffic.since(from, kind).find((sample) => sample.status === status);
      traffic.uncapped = true;
      const [read, submit] = await pollUntil(
        `${what}: requests to succeed again`,
        () => {
          const pair = [firstOk('read-credits', 200), firstOk('submit', 202)];
          return pair.every(Boolean) ? (pair as Sample[]) : undefined;
        },
        RECOVERY_MS + 10_000,
        100,
      );
      traffic.uncapped = false;
      return { reads_ms: read.startedAt + read.ms - from, submits_ms: submit.startedAt + submit.ms - from };
    }

    // --- Redis: killed (every key lost), down for a few seconds, started again empty.
    const redisBurst = await burst('baseline');
    traffic.phase = 'redis-down';
    await redis.kill();
    // Down from here on for sure (the process has exited); the outage lasts until it answers again.
    const redisDownAt = Date.now();
    await holdOutage(redisDownAt, 'Redis down');
    const redisStartingAt = Date.now();
    await redis.start();
    const redisUpAt = Date.now();
    traffic.phase = 'redis-back';
    const redisRecovery = await recovery(redisUpAt, 'Redis back');

    // --- PostgreSQL: crashed (immediate stop), down for a few seconds, started again (crash recovery).
    await pollUntil(
      'the load to run normally again',
      () => traffic.since(Date.now() - 1000).every((s) => s.status < 300),
      30_000,
    );
    const postgresBurst = await burst('redis-back');
    traffic.phase = 'postgres-down';
    await cluster.stop('immediate');
    const postgresDownAt = Date.now();
    await holdOutage(postgresDownAt, 'PostgreSQL down');
    const postgresStartingAt = Date.now();
    await cluster.start();
    const postgresUpAt = Date.now();
    traffic.phase = 'postgres-back';
    const postgresRecovery = await recovery(postgresUpAt, 'PostgreSQL back');
    await pollUntil(
      'the load to run normally again',
      () => traffic.since(Date.now() - 1000).every((s) => s.status < 300),
      30_000,
    );
    await traffic.stop();

    // Every answer: a success, or a fast 503 envelope saying the service is unavailable — nothing else.
    const isAllowed = (sample: Sample): boolean => {
      if (sample.ms >= BOUND_MS || sample.networkError) return false;
      if ([200, 202].includes(sample.status)) return true;
      if (sample.status !== 503) return false;
      const error = sample.body?.error;
      if (!error || error.retryable !== true || error.request_id !== sample.headers?.get('x-request-id')) return false;
      if (error.code === 'service_unavailable') return true;
      // Right after Redis came back empty it holds no worker heartbeat until the worker has reconnected
      // (it beats again at once then): region_unavailable, also a retryable 503, for a moment only.
      return (
        error.code === 'region_unavailable' && sample.startedAt >= redisUpAt && sample.startedAt < redisUpAt + 3000
      );
    };
    expect(traffic.samples.filter((sample) => !isAllowed(sample)).map(summary)).toEqual([]);
    // While a dependency was down (requests begun after it went, answered before its restart began): all 503.
    const during = (from: number, to: number) =>
      traffic.samples.filter((sample) => sample.startedAt > from + 100 && sample.startedAt + sample.ms < to);
    for (const [from, to] of [
      [redisDownAt, redisStartingAt],
      [postgresDownAt, postgresStartingAt],
    ]) {
      const window = during(from, to);
      expect(window.length).toBeGreaterThanOrEqual(5);
      expect(window.filter((sample) => sample.body?.error?.code !== 'service_unavailable').map(summary)).toEqual([]);
    }
    expect(redisRecovery.reads_ms).toBeLessThan(RECOVERY_MS);
    expect(redisRecovery.submits_ms).toBeLessThan(RECOVERY_MS);
    expect(postgresRecovery.reads_ms).toBeLessThan(RECOVERY_MS);
    expect(postgresRecovery.submits_ms).toBeLessThan(RECOVERY_MS);

    // Nothing lost: every job of the account (each accepted one, and any created by a request whose
    // answer was lost to the outage) reaches a terminal status ...
    const drainStarted = Date.now();
    let open: string[] = [];
    let fewestOpen = Infinity;
    let progressAt = drainStarted;
    const stillOpen = () => `still open: ${open.join(', ')}`;
    const jobs = await pollUntil(
      () => `every job to reach a terminal status; ${stillOpen()}`,
      async () => {
        worker!.assertAlive();
        const listed = await listAll(api!, account.apiKey, '/v1/sdr2hdr/jobs');
        open = listed
          .filter((job) => !isTerminal(job.status))
          .map(
            (job) => `${job.job_id} ${job.status} (accepted in: ${traffic.accepted.get(job.job_id) ?? 'answer lost'})`,
          );
        if (open.length < fewestOpen) [fewestOpen, progressAt] = [open.length, Date.now()];
        if (Date.now() - progressAt > DRAIN_STALL_MS) {
          throw new Error(`no job reached a terminal status for ${DRAIN_STALL_MS} ms; ${stillOpen()}`);
        }
        return open.length === 0 ? listed : undefined;
      },
      240_000,
      500,
    );
    const drainMs = Date.now() - drainStarted;
    const listedIds = new Set(jobs.map((job) => job.job_id as string));
    expect([...traffic.accepted.keys()].filter((id) => !listedIds.has(id))).toEqual([]);
    const statusOf = new Map(jobs.map((job) => [job.job_id as string, job.status as string]));
    // ... the jobs waiting in the queue when Redis lost it were still processed ...
    expect(redisBurst.queuedAtOutage.length).toBeGreaterThanOrEqual(1);
    expect(redisBurst.ids.map((id) => [id, statusOf.get(id)])).toEqual(redisBurst.ids.map((id) => [id, 'succeeded']));
    // ... no money is left held ...
    const credits = await timedCall(api.url, 'GET', '/v1/account/credits', { key: account.apiKey });
    expect(credits.body.reserved_credits).toBe(0);
    // ... and every job's terminal event reached the receiver, with a valid signature.
    const expected = new Set(jobs.map((job) => `${job.job_id} job.${job.status}`));
    await pollUntil(
      'every terminal event to be delivered',
      () => {
        const delivered = sink!.delivered();
        const seen = new Set(
          sink!.requests
            .filter((request) => delivered.has(request.headers['webhook-id']))
            .map((request) => JSON.parse(request.body))
            .map((payload) => `${payload.data.job.job_id} ${payload.event}`),
        );
        return [...expected].every((entry) => seen.has(entry));
      },
      90_000,
      250,
    );
    const verified = sink.verifyAll(secret);
    const unique = new Map(verified.map((event) => [event.id, `${event.jobId} ${event.event}`]));
    expect([...unique.values()].sort()).toEqual([...expected].sort());

    const count503 = (phase: Phase, code = 'service_unavailable') =>
      traffic.samples.filter((sample) => sample.phase === phase && sample.body?.error?.code === code).length;
    const byStatus: Record<string, number> = {};
    for (const job of jobs) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
    logMeasurement('outages', {
      setup_ms: setupMs,
      requests: traffic.samples.length,
      max_latency_ms: Math.max(...traffic.samples.map((sample) => sample.ms)),
      redis: {
        outage_ms: redisUpAt - redisDownAt,
        service_unavailable_503: count503('redis-down') + count503('redis-back'),
        region_unavailable_503_after_restart: count503('redis-back', 'region_unavailable'),
        recovery_reads_ms: redisRecovery.reads_ms,
        recovery_submits_ms: redisRecovery.submits_ms,
        burst_queued_at_loss: redisBurst.queuedAtOutage.length,
        burst_statuses: redisBurst.ids.map((id) => statusOf.get(id)),
      },
      postgres: {
        outage_ms: postgresUpAt - postgresDownAt,
        service_unavailable_503: count503('postgres-down') + count503('postgres-back'),
        recovery_reads_ms: postgresRecovery.reads_ms,
        recovery_submits_ms: postgresRecovery.submits_ms,
        burst_queued_at_stop: postgresBurst.queuedAtOutage.length,
        burst_statuses: postgresBurst.ids.map((id) => statusOf.get(id)),
      },
      jobs_accepted: traffic.accepted.size,
      jobs_created: jobs.length,
      jobs_by_status: byStatus,
      drain_ms: drainMs,
      // Per job, in seconds since the drain began: created, started, finished (where a slow drain went).
      job_timeline: jobs
        .map((job) => [job.created_at, job.started_at, job.finished_at].map((at) => since(drainStarted, at)))
        .sort((a, b) => a[0] - b[0]),
      webhook_requests: sink.requests.length,
      events_delivered: unique.size,
      duplicate_deliveries: sink.requests.length - unique.size,
      total_ms: Date.now() - started,
    });
    // A drain that keeps making progress may outlast the suite's 180 s on a loaded machine; a stall fails it early.
  }, 360_000);
});
