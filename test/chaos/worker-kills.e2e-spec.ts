// A worker process SIGKILLed again and again (with its ffmpeg children, like a container killed by the
// orchestrator) while 20 jobs run: every job still succeeds, and each is charged exactly once for what it
// used — one authorise and one settlement in the ledger per job, no hold left, balance = grants − captures.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { sdrMp4, speechWav } from '../fixtures/media';
import { createAccount, type TestAccount, type TestApi } from '../support/app';
import { startWorkerFleet, type WorkerFleet } from '../support/worker-fleet';
import { upload } from '../support/jobs';
import {
  auditMoney,
  isTerminal,
  jobsInFfmpeg,
  listAll,
  logMeasurement,
  pollUntil,
  sleep,
  spawnWorker,
  timedCall,
  type WorkerProcess,
} from '../support/processes';

const REGION = 'chaos-kill';
const JOBS = 20;
const AUDIO_JOBS = 5;
const KILLS = 6;
const GRANT = 5000;

describe('a worker SIGKILLed repeatedly while 20 jobs run', () => {
  let api: TestApi;
  let account: TestAccount;
  let fleet: WorkerFleet;
  let dir: string;
  let worker: WorkerProcess | undefined;
  let app: string;

  beforeAll(async () => {
    fleet = await startWorkerFleet('chaos-kill', { REGION });
    ({ api, app, dir } = fleet);
    account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
  });

  afterAll(() => fleet?.close());

  it('every job ends, charged once for its actual usage; no hold is left', async () => {
    const started = Date.now();
    const workerEnv = fleet.workerEnv(REGION, {
      WORKER_CONCURRENCY: '2',
      // Whatever the queue gave up on is found by the reconciler quickly.
      WORKER_RECONCILE_MS: '2000',
      WORKER_STALE_JOB_SECONDS: '10',
      // A SIGKILLed worker never removes its work directories: keep them in this test's directory.
      TMPDIR: join(dir, 'tmp'),
    });
    await mkdir(workerEnv.TMPDIR);
    const logFile = join(dir, 'workers.log');
    const video = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 320, height: 180, seconds: 6, audio: false }),
    );
    const speech = await upload(api, account.apiKey, await speechWav(), 'audio/wav');
    worker = spawnWorker(workerEnv, { logFile, app });
    let spawnedAt = Date.now();

    // Submit all 20 once the first worker's heartbeat makes the region healthy (503 region_unavailable until then).
    const paths: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const audio = i % (JOBS / AUDIO_JOBS) === JOBS / AUDIO_JOBS - 1;
      const path = audio ? '/v1/audio/jobs' : '/v1/sdr2hdr/jobs';
      const body = audio
        ? { inputs: [{ upload_id: speech }], output: { target_lufs: -16, container: 'wav' } }
        : { inputs: [{ upload_id: video }], output: { resolution: 'source' } };
      const submitted = await pollUntil(
        `submit ${i} accepted`,
        async () => {
          worker!.assertAlive();
          const response = await timedCall(api.url, 'POST', path, { key: account.apiKey, body });
          if (response.status === 503 && response.body?.error?.code === 'region_unavailable') return undefined;
          return response;
        },
        30_000,
        100,
      );
      expect({ status: submitted.status, body: submitted.status === 202 ? 'job' : submitted.body }).toEqual({
        status: 202,
        body: 'job',
      });
      paths.push(`${path}/${submitted.body.job_id}`);
    }
    const jobIds = paths.map((path) => path.split('/').pop()!);

    // The kills, one every 2–4 s: each lands 0.5–2 s after the (re)started worker began running ffmpeg, so mid-job.
    const kills: { at: number; workerPid: number; runningJobs: string[]; cutJobs: string[]; workerUpMs: number }[] = [];
    const db = api.app.get(DataSource);
    for (let k = 0; k < KILLS; k++) {
      const running = await pollUntil(
        `worker ${k + 1} to run ffmpeg`,
        async () => {
          worker!.assertAlive();
          const ids = await jobsInFfmpeg(worker!.pid);
          return ids.length > 0 ? ids : undefined;
        },
        30_000,
        100,
      );
      expect(running.every((id) => jobIds.includes(id))).toBe(true);
      await sleep(500 + Math.floor(Math.random() * 1500));
      const runningJobs = await jobsInFfmpeg(worker!.pid);
      const workerPid = worker!.pid;
      await worker!.kill();
      // Cut: ffmpeg ran for it a moment before the kill and it had not ended when its worker died. A job
      // whose last ffmpeg was finishing as the list was read may have ended (and committed) before the
      // SIGKILL landed: nothing was cut, and nobody has a reason to take it again. The worker's whole
      // group is gone here (kill() waits for it), so no end can commit after this read.
      const cutJobs = runningJobs.length
        ? (
            (await db.query(`SELECT id FROM jobs WHERE id = ANY ($1) AND status <> ALL ($2)`, [
              runningJobs,
              ['succeeded', 'partially_succeeded', 'failed', 'cancelled'],
            ])) as { id: string }[]
          ).map((row) => row.id)
        : [];
      kills.push({ at: Date.now(), workerPid, runningJobs, cutJobs, workerUpMs: Date.now() - spawnedAt });
      worker = spawnWorker(workerEnv, { logFile, app });
      spawnedAt = Date.now();
    }
    const chaosEnded = Date.now();

    // The last worker lives: every job reaches a terminal status.
    const views = await pollUntil(
      'every job to reach a terminal status',
      async () => {
        worker!.assertAlive();
        const current = await Promise.all(
          paths.map(async (path) => (await timedCall(api.url, 'GET', path, { key: account.apiKey })).body),
        );
        return current.every((view) => view && isTerminal(view.status)) ? current : undefined;
      },
      150_000,
      500,
    );
    const drainedMs = Date.now() - chaosEnded;

    // The chaos happened: most kills cut a running ffmpeg, and the jobs they cut were taken again.
    const interrupted = [...new Set(kills.flatMap((kill) => kill.cutJobs))];
    expect(kills.length).toBe(KILLS);
    expect(kills.filter((kill) => kill.runningJobs.length > 0).length).toBeGreaterThanOrEqual(3);
    // How many times a worker took each job (a crash-safe counter kept by the worker in the job row).
    const rows: { id: string; attempts: number }[] = await db.query(
      `SELECT id, attempts FROM jobs WHERE id = ANY ($1)`,
      [jobIds],
    );
    const attemptsOf = new Map(rows.map((row) => [row.id, row.attempts]));
    expect(interrupted.filter((id) => !(attemptsOf.get(id)! >= 2))).toEqual([]);
    // Every job succeeded, however often its worker was killed under it (a lost worker never uses a job up).
    const statusOf = new Map(views.map((view) => [view.job_id as string, view.status as string]));
    expect(jobIds.filter((id) => statusOf.get(id) !== 'succeeded').map((id) => `${id} ${statusOf.get(id)}`)).toEqual(
      [],
    );

    // The account sees exactly its 20 jobs, and the money adds up.
    const listed = [
      ...(await listAll(api, account.apiKey, '/v1/sdr2hdr/jobs')),
      ...(await listAll(api, account.apiKey, '/v1/audio/jobs')),
    ];
    expect(listed.map((job) => job.job_id).sort()).toEqual([...jobIds].sort());
    const money = await auditMoney(api, account.apiKey, views, GRANT);
    expect(money.problems).toEqual([]);

    logMeasurement('worker-kills', {
      kills: kills.length,
      kills_mid_job: kills.filter((kill) => kill.runningJobs.length > 0).length,
      worker_lifetimes_ms: kills.map((kill) => kill.workerUpMs),
      jobs_cut_per_kill: kills.map((kill) => kill.cutJobs.length),
      jobs_ended_before_the_kill: kills.map((kill) => kill.runningJobs.length - kill.cutJobs.length),
      jobs: JOBS,
      jobs_interrupted: interrupted.length,
      attempts_of_interrupted: interrupted.map((id) => attemptsOf.get(id)),
      failed: views
        .filter((view) => view.status === 'failed')
        .map((view) => ({ attempts: attemptsOf.get(view.job_id), code: view.error?.code })),
      terminal: views.filter((view) => isTerminal(view.status)).length,
      by_status: money.byStatus,
      charged_credits: money.chargedTotal,
      drain_after_last_kill_ms: drainedMs,
      total_ms: Date.now() - started,
    });
  });
});
