// A worker killed mid-job and Redis going away: every job still ends, billing stays consistent.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { ensureBuilt, ROOT } from '../support/dist-build';
import { call, createAccount, startApi, type JsonResponse, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { TcpProxy } from '../support/tcp-proxy';
import { startWorker } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';

const exec = promisify(execFile);

/** A worker as its own process group, like a container: killing the group kills ffmpeg with it. */
function spawnWorker(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/worker.js')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: 'ignore',
  });
  return child;
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    // Already gone: nothing left to kill.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

async function ffmpegRunningFor(jobId: string): Promise<boolean> {
  const { stdout } = await exec('ps', ['-eo', 'args']);
  return stdout.split('\n').some((line) => line.includes('ffmpeg') && line.includes(jobId));
}

/** Submits once the spawned worker's first heartbeat has made the region healthy (503 until then). */
async function submitWhenRegionUp(api: TestApi, key: string, uploadId: string): Promise<JsonResponse> {
  for (let i = 0; ; i++) {
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body: { inputs: [{ upload_id: uploadId }] } });
    if (response.status !== 503 || i >= 100) return response;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until ffmpeg runs for this job (up to 10 s) and says whether it does. */
async function waitForFfmpeg(jobId: string): Promise<boolean> {
  for (let i = 0; i < 200 && !(await ffmpegRunningFor(jobId)); i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return ffmpegRunningFor(jobId);
}

describe('resilience', () => {
  it('a worker SIGKILLed mid-job: the job is picked up again and charged exactly once', async () => {
    ensureBuilt('dist/src/worker.js');
    const region = 'crash';
    const storage = await mkdtemp(join(tmpdir(), 'mj-crash-'));
    const api = await startApi({ REGION: region, STORAGE_DIR: storage });
    const workerEnv = {
      REGION: region,
      STORAGE_DIR: storage,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
      // Short locks so a dead worker's job is noticed as stalled within seconds.
      WORKER_LOCK_MS: '2000',
    };
    let first: ChildProcess | undefined;
    let second: ChildProcess | undefined;
    try {
      first = spawnWorker(workerEnv);
      const account = await createAccount(api, { credits: 1000 });
      const uploadId = await upload(
        api,
        account.apiKey,
        await sdrMp4({ width: 1280, height: 720, seconds: 3, audio: false }),
      );
      const submitted = await submitWhenRegionUp(api, account.apiKey, uploadId);
      expect(submitted.status).toBe(202);
      const jobId = submitted.body.job_id as string;
      const estimate = submitted.body.billing.estimated_credits as number;
      expect(await waitForFfmpeg(jobId)).toBe(true);
      killGroup(first);
      first = undefined;

      second = spawnWorker(workerEnv);
      const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 120_000);
      expect(['succeeded', 'failed']).toContain(job.status);
      const db = api.app.get(DataSource);
      const ledger: { kind: string; credits: string }[] = await db.query(
        `SELECT kind, credits FROM credit_ledger WHERE job_id = $1 ORDER BY id`,
        [jobId],
      );
      if (job.status === 'succeeded') {
        expect(job.billing).toMatchObject({ charged_credits: estimate, state: 'settled' });
        expect(ledger.map((entry) => entry.kind)).toEqual(['authorise', 'capture']);
      } else {
        expect(job.billing).toMatchObject({ charged_credits: 0, refunded: true, state: 'released' });
        expect(ledger.map((entry) => entry.kind)).toEqual(['authorise', 'release']);
      }
      expect(await credits(api, account.apiKey)).toMatchObject({
        reserved_credits: 0,
        balance_credits: 1000 - job.billing.charged_credits,
      });
      const [{ attempts }] = await db.query('SELECT attempts FROM jobs WHERE id = $1', [jobId]);
      expect(attempts).toBeGreaterThanOrEqual(2);
    } finally {
      if (first) killGroup(first);
      if (second) killGroup(second);
      await api.close();
    }
    // Two encodes of the clip (the cut one and the retry) on a shared machine: room for waitForJob's 120 s.
  }, 180_000);

  it('SIGTERM: a worker finishes its running job before it exits', async () => {
    ensureBuilt('dist/src/worker.js');
    const region = 'drain';
    const storage = await mkdtemp(join(tmpdir(), 'mj-drain-'));
    const api = await startApi({ REGION: region, STORAGE_DIR: storage });
    const worker = spawnWorker({
      REGION: region,
      STORAGE_DIR: storage,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
    });
    try {
      // Nest closes the app on SIGTERM, then re-raises the signal: a clean exit is code 0 or that signal.
      const exited = new Promise<string>((resolve) =>
        worker.once('exit', (code, signal) => resolve(String(code ?? signal))),
      );
      const account = await createAccount(api, { credits: 1000 });
      const uploadId = await upload(
        api,
        account.apiKey,
        await sdrMp4({ width: 640, height: 360, seconds: 2, audio: false }),
      );
      const submitted = await submitWhenRegionUp(api, account.apiKey, uploadId);
      expect(submitted.status).toBe(202);
      const jobId = submitted.body.job_id as string;
      expect(await waitForFfmpeg(jobId)).toBe(true);
      worker.kill('SIGTERM');
      expect(['0', 'SIGTERM']).toContain(await exited);
      const job = (await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).body;
      expect(job).toMatchObject({ status: 'succeeded', billing: { state: 'settled' } });
    } finally {
      killGroup(worker);
      await api.close();
    }
  });

  it('Redis unreachable: submit and reads answer 503 service_unavailable, then recover by themselves', async () => {
    const proxy = await TcpProxy.start(6379);
    const env = {
      REGION: 'redis-out',
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-redis-')),
    };
    const api: TestApi = await startApi(env);
    const worker = await startWorker({
      ...env,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
    });
    try {
      const account = await createAccount(api, { credits: 100 });
      const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90 }));
      await proxy.close();
      const started = Date.now();
      const submit = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }] },
      });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(submit.status).toBe(503);
      expect(submit.body.error).toMatchObject({ code: 'service_unavailable', retryable: true });
      expect(submit.headers.get('x-request-id')).toBe(submit.body.error.request_id);
      const read = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      expect(read.status).toBe(503);
      expect(read.body.error.code).toBe('service_unavailable');
      await proxy.reopen();
      let recovered;
      for (let i = 0; i < 100; i++) {
        recovered = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }] },
        });
        if (recovered.status !== 503) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(recovered!.status).toBe(202);
      const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${recovered!.body.job_id}`);
      expect(job.status).toBe('succeeded');
      expect(await credits(api, account.apiKey)).toMatchObject({ reserved_credits: 0 });
    } finally {
      await proxy.reopen();
      await worker.close();
      await api.close();
      await proxy.close();
    }
  });
});
