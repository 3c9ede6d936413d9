// A worker process SIGKILLed on its own (the OOM killer, `kill -9 <pid>`: not its process group, as a
// container stop would) in the middle of an encode (issue 12 item 18): its ffmpeg dies with it, and
// the next worker started on the host removes the work folder it left behind.
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { createAccount, type TestAccount, type TestApi } from '../support/app';
import { startWorkerFleet, type WorkerFleet } from '../support/worker-fleet';
import { upload, waitForJob } from '../support/jobs';
import {
  groupProcesses,
  jobsInFfmpeg,
  pollUntil,
  spawnWorker,
  timedCall,
  type WorkerProcess,
} from '../support/processes';

const REGION = 'chaos-leftovers';

/** Every path under `dir` (folders and files). */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map((entry) => join(dir, entry));
}

describe('a worker SIGKILLed alone mid-encode', () => {
  let api: TestApi;
  let account: TestAccount;
  let fleet: WorkerFleet;
  let dir: string;
  let app: string;
  let first: WorkerProcess | undefined;

  beforeAll(async () => {
    fleet = await startWorkerFleet('chaos-leftovers', { REGION });
    ({ api, app, dir } = fleet);
    account = await createAccount(api, { plan: 'enterprise', credits: 5000 });
  });

  afterAll(() => fleet?.close());

  it('leaves no ffmpeg running, and the next worker removes its work folder', async () => {
    const workerTmp = join(dir, 'tmp');
    await mkdir(workerTmp);
    const env = fleet.workerEnv(REGION, {
      TMPDIR: workerTmp,
    });
    const logFile = join(dir, 'workers.log');
    // Long enough that the encode is still running well after the kill.
    const video = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 640, height: 360, seconds: 10, audio: false }),
    );
    first = spawnWorker(env, { logFile, app });
    const submitted = await pollUntil(
      'the submit to be accepted',
      async () => {
        first!.assertAlive();
        const response = await timedCall(api.url, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: video }], output: { resolution: 'source' } },
        });
        return response.status === 202 ? response : undefined;
      },
      30_000,
    );
    const jobId = submitted.body.job_id as string;
    await pollUntil('ffmpeg to run the job', async () => (await jobsInFfmpeg(first!.pid)).includes(jobId), 30_000, 100);
    const ffmpegPids = (await groupProcesses(first.pid))
      .filter((process) => process.comm === 'ffmpeg')
      .map((process) => process.pid);
    const left = (await tree(workerTmp)).filter((path) => path.includes(jobId));
    expect(left.length).toBeGreaterThan(0);

    // SIGKILL to the worker process only.
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    // Its ffmpeg goes with it (the kernel sends SIGKILL on its parent's death): none is left in its group.
    const survivors = await pollUntil(
      'the ffmpeg of the dead worker to be gone',
      async () => {
        const alive = (await groupProcesses(first!.pid)).filter((process) => ffmpegPids.includes(process.pid));
        return alive.length === 0 ? [] : undefined;
      },
      5000,
      100,
    ).catch(async () => groupProcesses(first!.pid));
    expect(survivors.map((process) => `${process.pid} ${process.comm}`)).toEqual([]);
    // What it left on disk is still there until a worker starts.
    expect(left.filter((path) => existsSync(path)).length).toBeGreaterThan(0);

    // The next worker on this host removes it, and takes the job again to the end.
    const second = spawnWorker(env, { logFile, app });
    await pollUntil(
      'the work folder of the dead worker to be removed',
      () => {
        second.assertAlive();
        return left.every((path) => !existsSync(path));
      },
      30_000,
      100,
    );
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 150_000);
    expect(job.status).toBe('succeeded');
    // Nothing of the job is left in the workers' temp folder once it ended.
    expect((await tree(workerTmp)).filter((path) => path.includes(jobId))).toEqual([]);
  });
});
