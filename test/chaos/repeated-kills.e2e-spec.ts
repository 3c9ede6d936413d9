// Any number of worker kills fail no job (issue 12 item 17): one job whose worker is SIGKILLed (with
// its process group, as a container is) every time it runs the job's ffmpeg, five times in a row,
// still succeeds once a worker lives, charged exactly once. (BullMQ counts each such loss as a stall;
// the queue used to give up after the third and fail the job as upstream_error.)
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { sdrMp4 } from '../fixtures/media';
import { createAccount, type TestAccount, type TestApi } from '../support/app';
import { startWorkerFleet, type WorkerFleet } from '../support/worker-fleet';
import { upload, waitForJob } from '../support/jobs';
import {
  auditMoney,
  isTerminal,
  jobsInFfmpeg,
  logMeasurement,
  pollUntil,
  spawnWorker,
  timedCall,
  type WorkerProcess,
} from '../support/processes';

const REGION = 'chaos-repeated-kills';
const KILLS = 5;
const GRANT = 1000;

describe(`one job whose worker is killed ${KILLS} times`, () => {
  let api: TestApi;
  let account: TestAccount;
  let fleet: WorkerFleet;
  let dir: string;
  let app: string;

  beforeAll(async () => {
    fleet = await startWorkerFleet('chaos-repeated-kills', { REGION });
    ({ api, app, dir } = fleet);
    account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
  });

  afterAll(() => fleet?.close());

  it('succeeds once a worker lives, charged once', async () => {
    const started = Date.now();
    const env = fleet.workerEnv(REGION, {
      TMPDIR: dir,
    });
    const logFile = join(dir, 'workers.log');
    const video = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 320, height: 180, seconds: 6, audio: false }),
    );
    let worker: WorkerProcess = spawnWorker(env, { logFile, app });
    const submitted = await pollUntil(
      'the submit to be accepted',
      async () => {
        worker.assertAlive();
        const response = await timedCall(api.url, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: video }], output: { resolution: 'source' } },
        });
        return response.status === 202 ? response : undefined;
      },
      30_000,
    );
    const jobId = submitted.body.job_id as string;

    const db = api.app.get(DataSource);
    let kills = 0;
    while (kills < KILLS) {
      // Either the job's ffmpeg runs (kill it) or the job ended already (the queue gave up on it).
      const state = await pollUntil(
        `worker ${kills + 1} to run the job's ffmpeg`,
        async () => {
          worker.assertAlive();
          if ((await jobsInFfmpeg(worker.pid)).includes(jobId)) return 'running';
          const [{ status }] = await db.query('SELECT status FROM jobs WHERE id = $1', [jobId]);
          return isTerminal(status) ? 'ended' : undefined;
        },
        60_000,
        50,
      );
      if (state === 'ended') break;
      await worker.kill();
      kills++;
      worker = spawnWorker(env, { logFile, app });
    }

    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 180_000);
    expect({ status: job.status, error: job.error?.code ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(kills).toBe(KILLS);
    const [{ attempts }] = await db.query('SELECT attempts FROM jobs WHERE id = $1', [jobId]);
    expect(attempts).toBeGreaterThanOrEqual(KILLS + 1);
    const money = await auditMoney(api, account.apiKey, [job], GRANT);
    expect(money.problems).toEqual([]);
    logMeasurement('repeated-kills', { kills: KILLS, worker_starts: attempts, total_ms: Date.now() - started });
  });
});
