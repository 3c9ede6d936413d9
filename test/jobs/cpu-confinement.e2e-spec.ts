// A worker an operator confined to one CPU (`taskset`, as the segment and fan-out benchmarks do to make
// two cores stand in for two machines) keeps its encoder on that CPU: every thread of its ffmpeg, x265's
// included, may run only there. Without being told, x265 re-pins its NUMA thread pools to the whole node
// and the "one-core" worker encodes on both (src/media/cpu-set.ts).
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startWorkerFleet, type WorkerFleet } from '../support/worker-fleet';
import { groupProcesses, pollUntil, spawnWorker } from '../support/processes';

const exec = promisify(execFile);

/** Each thread's allowed CPUs (the kernel's Cpus_allowed_list), by thread id; empty once the process is gone. */
async function threadCpus(pid: number): Promise<Map<string, string>> {
  const cpus = new Map<string, string>();
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const task of tasks) {
    const status = await readFile(`/proc/${pid}/task/${task}/status`, 'utf8').catch(() => '');
    const allowed = /^Cpus_allowed_list:\s*(\S+)$/m.exec(status)?.[1];
    if (allowed) cpus.set(task, allowed);
  }
  return cpus;
}

describe('a worker confined to one CPU', () => {
  let fleet: WorkerFleet;

  beforeAll(async () => {
    fleet = await startWorkerFleet('cpu-confinement');
  }, 180_000);

  afterAll(() => fleet?.close(), 120_000);

  it('encodes with every ffmpeg thread on that CPU (x265 does not re-pin itself to the other cores)', async () => {
    const region = 'cpu-one';
    const tmp = join(fleet.dir, 'tmp-cpu-one');
    await mkdir(tmp);
    const worker = spawnWorker(fleet.workerEnv(region, { WORKER_CONCURRENCY: '1', TMPDIR: tmp }), {
      app: fleet.app,
      logFile: join(fleet.dir, 'worker-cpu-one.log'),
    });
    // As an operator would pin a running worker: every thread of the process, inherited by its children.
    await exec('taskset', ['-a', '-cp', '0', String(worker.pid)]);

    const { api } = fleet;
    const account = await createAccount(api, { plan: 'enterprise', credits: 10_000 });
    // Long enough on one core (several seconds) to look at the encoder while it works.
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 1280, height: 720, seconds: 6 }));
    let submitted: { status: number; body: any } | undefined;
    await pollUntil(
      'the pinned worker to serve its region',
      async () => {
        worker.assertAlive();
        submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }], region },
        });
        return submitted.status === 202 || undefined;
      },
      60_000,
      200,
    );
    const jobId = submitted!.body.job_id as string;

    // Frames are coming out (progress > 0), so x265 has built its threads: read them all.
    await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, ['processing']);
    const threads = await pollUntil(
      'the encode to be under way',
      async () => {
        const job = await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey });
        if (!(job.body.progress > 0)) return undefined;
        const encoder = (await groupProcesses(worker.pid)).find(
          (process) => process.comm === 'ffmpeg' && process.args.includes('libx265'),
        );
        if (!encoder) return undefined;
        const cpus = await threadCpus(encoder.pid);
        return cpus.size > 1 ? cpus : undefined;
      },
      60_000,
      100,
    );
    expect([...new Set(threads.values())]).toEqual(['0']);

    const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, { key: account.apiKey });
    expect(cancelled.status).toBe(200);
    expect((await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`)).status).toBe('cancelled');
  }, 180_000);
});
