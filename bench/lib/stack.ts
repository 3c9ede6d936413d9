// Our API and one worker as separate processes, as production runs them, for benchmarks that
// measure whole jobs.
import { readdir, readFile } from 'node:fs/promises';
import { createAccount, getJob, submitJob, type BenchAccount } from './client';
import type { BenchEnvironment } from './environment';
import { memoryOf, sleep, startProcess, type Service } from './processes';

export interface Stack {
  api: Service;
  worker: Service;
  account: BenchAccount;
  close(): Promise<void>;
}

export async function startStack(
  env: BenchEnvironment,
  region: string,
  credits: number,
  options: { onWorkerLine?: (line: string) => void } = {},
): Promise<Stack> {
  const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION: region });
  const worker = await startWorker(env, region, options.onWorkerLine);
  const account = await createAccount(env, api.url, credits);
  const stack: Stack = {
    api,
    worker,
    account,
    // The current worker: a benchmark may have replaced it.
    close: async () => {
      await stack.worker.stop();
      await api.stop();
    },
  };
  return stack;
}

export function startWorker(env: BenchEnvironment, region: string, onLine?: (line: string) => void): Promise<Service> {
  return startProcess(
    'dist/src/worker.js',
    { ...env.serviceEnv, REGION: region, WORKER_CONCURRENCY: '1' },
    { listen: false, onLine },
  );
}

/** Submits once the worker's heartbeat has made its region healthy (503 region_unavailable until then). */
export async function submitWhenReady(stack: Stack, body: unknown): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await submitJob(stack.api.url, stack.account.apiKey, body);
    } catch (error) {
      if (attempt > 100 || !String(error).includes('region_unavailable')) throw error;
      await sleep(100);
    }
  }
}

export async function waitForJob(stack: Stack, jobId: string, pollMs = 50, timeoutMs = 30 * 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(stack.api.url, stack.account.apiKey, jobId);
    if (!['queued', 'processing'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status} after ${timeoutMs} ms`);
    await sleep(pollMs);
  }
}

/** Peak resident memory of a process's children (ffmpeg), sampled until stopped. */
export function watchChildren(pid: number, everyMs = 200): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    void (async () => {
      const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
      for (const task of tasks) {
        const children = (await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => ''))
          .split(' ')
          .filter(Boolean);
        for (const child of children) {
          const memory = await memoryOf(Number(child)).catch(() => null);
          if (memory && memory.peakRssMiB > peak) peak = memory.peakRssMiB;
        }
      }
    })();
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}
