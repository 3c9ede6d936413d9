// Benchmark: a job's items spread over workers. The same 4-item sdr2hdr job, submit → succeeded, on
// two workers against one worker, each worker pinned to one core (`taskset -c N`), so the machine's
// two cores stand in for two machines. The "bare" side is the one-worker run: what a job took before
// its items could leave the worker that took it.
import { createAccount, uploadFile } from './lib/client';
import { createEnvironment } from './lib/environment';
import { sdrClip } from './lib/media';
import { startProcess, type Service } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { submitWhenReady, waitForJob, type Stack } from './lib/stack';
import { alternate, median, round } from './lib/stats';

const ONE = 'fanout1';
const TWO = 'fanout2';
const ITEMS = 4;

export async function benchFanout(context: BenchContext): Promise<BenchResult> {
  const [width, height, seconds] = context.quick ? [640, 360, 1] : [1280, 720, 2];
  const rounds = context.quick ? 1 : 3;
  const env = await createEnvironment('fanout');
  const services: Service[] = [];
  const worker = async (region: string, cpu: number) => {
    const service = await startProcess(
      'dist/src/worker.js',
      { ...env.serviceEnv, REGION: region, WORKER_CONCURRENCY: '1' },
      { listen: false, cpu },
    );
    services.push(service);
  };
  try {
    const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION: ONE });
    services.push(api);
    await worker(ONE, 0);
    await worker(TWO, 0);
    await worker(TWO, 1);
    const account = await createAccount(env, api.url, 10_000_000);
    const stack: Stack = { api, worker: services[1], account, close: async () => undefined };
    const clip = await uploadFile(api.url, account.apiKey, await sdrClip(width, height, seconds));
    const body = (region: string) => ({ region, inputs: Array.from({ length: ITEMS }, () => ({ upload_id: clip })) });
    // Warm-up (not measured): each region's first heartbeat (three workers booting on a loaded machine
    // may take longer than submitWhenReady waits), the processes' JIT and file caches.
    for (const region of [ONE, TWO]) {
      for (let attempt = 0; ; attempt++) {
        try {
          await waitForJob(stack, (await submitWhenReady(stack, body(region))).job_id);
          break;
        } catch (error) {
          if (attempt >= 5) throw error;
        }
      }
    }

    const workersUsed: number[] = [];
    const run = (region: string) => async () => {
      const started = Date.now();
      const job = await waitForJob(stack, (await submitWhenReady(stack, body(region))).job_id);
      if (job.status !== 'succeeded') throw new Error(`fanout: job ${job.job_id} ended ${job.status}`);
      if (region === TWO)
        workersUsed.push(new Set((job.items as { worker: string }[]).map((item) => item.worker)).size);
      return (Date.now() - started) / 1000;
    };
    const runs = await alternate<number>(rounds, run(TWO), run(ONE));
    return compare(
      'fanout',
      `${ITEMS}-item sdr2hdr job (${seconds} s ${width}×${height} each), submit → succeeded × ${rounds} rounds: 2 workers (taskset -c 0 and -c 1) vs 1 worker (taskset -c 0)`,
      { metric: 'seconds', ours: runs.ours, bare: runs.bare, higherIsBetter: false },
      { text: '≤ 0.6 × the one-worker wall time', met: (ratio) => ratio <= 0.6 },
      {
        two_workers_median_seconds: round(median(runs.ours), 2),
        one_worker_median_seconds: round(median(runs.bare), 2),
        // alternate() runs the pair in swapped order every other round; each round's own ratio shows the noise.
        per_round_ratio: runs.ours.map((value, index) => round(value / runs.bare[index], 2)),
        workers_that_ran_items_per_two_worker_run: workersUsed,
        provisional: 'measured on a 2-core machine shared with other work: ratios of medians, not absolute numbers',
      },
    );
  } finally {
    for (const service of services.reverse()) await service.stop();
    await env.close();
  }
}
