// Benchmark 4 (issues 16 and 13): the wall time of an sdr2hdr job from submit to `succeeded` (our API,
// queue, worker and pipeline; the client polls by the job's progress, every 50 ms near the end) against the same ffmpeg command line run by
// hand on the same file — the overhead of everything around the encode — on both storage backends in
// one run: bare, our job on STORAGE_BACKEND=local and on STORAGE_BACKEND=s3 (a private Swift on
// loopback), in rotating order each round. Where the extra time goes comes from the worker itself: its
// "item timings" log line (src/processing/item-timings.ts) gives each stage in ms.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_X265_CRF, DEFAULT_X265_PRESET } from '../src/media/encoder-settings';
import { buildSdrToHdrArgs } from '../src/media/hdr-args';
import { probeMedia } from '../src/media/probe';
import { startSwift } from '../test/support/swift';
import { getJob, uploadFile } from './lib/client';
import { createEnvironment, type BenchEnvironment } from './lib/environment';
import { sdrClip } from './lib/media';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { sleep } from './lib/processes';
import { startStack, submitWhenReady, waitForJob, type Stack } from './lib/stack';
import { median, round } from './lib/stats';

const POLL_MS = 50;
const SLOW_POLL_MS = 1000;

/**
 * Polls a job the way a client that wants its result at once but does not spin would: the time left
 * is estimated from the job's progress, and the client waits a quarter of it between reads (at most
 * 1 s, at least POLL_MS near the end). A fixed 50 ms poll through a 14 s encode cost the API ~1.8 ms
 * of CPU per read (~0.5 s per job, taken from the encode on 2 cores) — the bench client's cost, not
 * the service's; the end is still seen within ~POLL_MS.
 */
async function waitAdaptively(stack: Stack, jobId: string): Promise<any> {
  const started = Date.now();
  for (;;) {
    const job = await getJob(stack.api.url, stack.account.apiKey, jobId);
    if (!['queued', 'processing'].includes(job.status)) return job;
    const progress = Number(job.progress ?? 0);
    const elapsed = Date.now() - started;
    const left = progress > 0.02 ? (elapsed * (1 - progress)) / progress : SLOW_POLL_MS * 4;
    await sleep(Math.max(POLL_MS, Math.min(SLOW_POLL_MS, left / 4)));
  }
}

/** A process's CPU time in ms: its own, and that of its children it has waited for (ffmpeg, ffprobe). */
async function cpuOf(pid: number | 'self'): Promise<{ own: number; children: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name: utime, stime, cutime, cstime are the 12th–15th (clock ticks, 100/s).
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  return { own: (fields[11] + fields[12]) * 10, children: (fields[13] + fields[14]) * 10 };
}

function runFfmpeg(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}`))));
  });
}

/** The worker's "item timings" line for one item (see src/processing/item-timings.ts). */
interface ItemTimings {
  job_id: string;
  outcome: string;
  backend: string;
  output_bytes: number | null;
  stages_ms: Record<string, number>;
  total_ms: number;
  other_ms: number;
}

/** Collects a worker's "item timings" lines by job id. */
class TimingsLog {
  private readonly seen = new Map<string, ItemTimings>();
  private readonly waiting = new Map<string, (timings: ItemTimings) => void>();

  readonly onLine = (line: string): void => {
    if (!line.includes('"item timings"')) return;
    const entry = JSON.parse(line) as ItemTimings;
    this.seen.set(entry.job_id, entry);
    this.waiting.get(entry.job_id)?.(entry);
  };

  /** The worker's log is buffered (flushed every 250 ms): wait a little for the line. */
  async of(jobId: string): Promise<ItemTimings> {
    const known = this.seen.get(jobId);
    if (known) return known;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`pipeline: no "item timings" line for ${jobId}`)), 5000);
      this.waiting.set(jobId, (timings) => {
        clearTimeout(timer);
        this.waiting.delete(jobId);
        resolve(timings);
      });
    });
  }
}

/** One job's time, in ms, cut where the client and the server can see it. */
interface JobRun {
  total: number;
  /** POST → 202 (client). */
  submit: number;
  /** created_at → started_at: the API's commit, the job's unit, its item's unit, the take. */
  submitToStart: number;
  /** started_at → finished_at (the worker). */
  startToFinish: number;
  /** finished_at → the client saw `succeeded` (its polling interval, the read). */
  finishToSeen: number;
  worker: ItemTimings;
  /** CPU ms during the job: the API process, the worker process itself, the media tools it ran. */
  cpu: { api: number; worker: number; tools: number };
}

const STAGES = [
  'claim',
  'input',
  'check',
  'probe',
  'encode',
  'light_map',
  'verify',
  'store',
  'end',
  'cleanup',
] as const;

/** Medians in ms: the client's cut and the worker's stages. */
function breakdown(runs: JobRun[]): Record<string, number> {
  const of = (pick: (run: JobRun) => number) => round(median(runs.map(pick)), 1);
  const result: Record<string, number> = {
    total: of((run) => run.total),
    submit_http: of((run) => run.submit),
    submit_to_start: of((run) => run.submitToStart),
    start_to_finish: of((run) => run.startToFinish),
    finish_to_seen: of((run) => run.finishToSeen),
  };
  for (const stage of STAGES) result[`worker_${stage}`] = of((run) => run.worker.stages_ms[stage] ?? 0);
  result.worker_other = of((run) => run.worker.other_ms);
  result.worker_total = of((run) => run.worker.total_ms);
  result.worker_not_encode = of((run) => run.worker.total_ms - (run.worker.stages_ms.encode ?? 0));
  result.output_bytes = of((run) => run.worker.output_bytes ?? 0);
  result.cpu_api = of((run) => run.cpu.api);
  result.cpu_worker = of((run) => run.cpu.worker);
  result.cpu_media_tools = of((run) => run.cpu.tools);
  return result;
}

export async function benchPipeline(context: BenchContext): Promise<BenchResult[]> {
  const [width, height, seconds] = context.quick ? [640, 360, 1] : [1920, 1080, 10];
  const rounds = context.quick ? 1 : 3;
  const clip = await sdrClip(width, height, seconds);
  const scratch = await mkdtemp(join(tmpdir(), 'mediajobs-bench-pipeline-'));
  const swift = await startSwift();
  const localEnv = await createEnvironment('pipeline');
  const s3Base = await createEnvironment('pipelines3');
  const s3Env: BenchEnvironment = {
    ...s3Base,
    serviceEnv: { ...s3Base.serviceEnv, ...swift.env(`mj-pipeline-${process.pid}`, 'bench/') },
  };
  const stacks: Stack[] = [];
  try {
    const sides = [] as { name: 'local' | 's3'; stack: Stack; log: TimingsLog; uploadId: string; runs: JobRun[] }[];
    for (const [name, env, region] of [
      ['local', localEnv, 'benchp'],
      ['s3', s3Env, 'benchps3'],
    ] as const) {
      const log = new TimingsLog();
      const stack = await startStack(env, region, 1_000_000, { onWorkerLine: log.onLine });
      stacks.push(stack);
      // Warm-up (not measured): the worker's first heartbeat, the processes' JIT and file caches.
      const warmUp = await uploadFile(stack.api.url, stack.account.apiKey, await sdrClip(320, 180, 1));
      await waitForJob(stack, (await submitWhenReady(stack, { inputs: [{ upload_id: warmUp }] })).job_id, POLL_MS);
      const uploadId = await uploadFile(stack.api.url, stack.account.apiKey, clip);
      sides.push({ name, stack, log, uploadId, runs: [] });
    }
    const probed = await probeMedia(clip, { api: 'sdr2hdr', ffprobePath: 'ffprobe' });
    if (!probed.ok) throw new Error(`pipeline: the clip does not probe: ${probed.message}`);
    // What the worker runs for this input (resolution "source", mp4, default preset and CRF).
    const args = buildSdrToHdrArgs({
      input: clip,
      output: join(scratch, 'by-hand.mp4'),
      probe: probed.probe,
      container: 'mp4',
      targetHeight: height,
    });

    const job = async (side: (typeof sides)[number]): Promise<number> => {
      const [api0, worker0] = await Promise.all([cpuOf(side.stack.api.pid), cpuOf(side.stack.worker.pid)]);
      const started = Date.now();
      const submitted = await submitWhenReady(side.stack, { inputs: [{ upload_id: side.uploadId }] });
      const accepted = Date.now();
      const view = await waitAdaptively(side.stack, submitted.job_id);
      const seen = Date.now();
      const [api1, worker1] = await Promise.all([cpuOf(side.stack.api.pid), cpuOf(side.stack.worker.pid)]);
      if (view.status !== 'succeeded') throw new Error(`pipeline: job ${view.job_id} ended ${view.status}`);
      const [created, begun, finished] = [view.created_at, view.started_at, view.finished_at].map((at: string) =>
        Date.parse(at),
      );
      side.runs.push({
        total: seen - started,
        submit: accepted - started,
        submitToStart: begun - created,
        startToFinish: finished - begun,
        finishToSeen: seen - finished,
        worker: await side.log.of(submitted.job_id),
        cpu: {
          api: api1.own - api0.own,
          worker: worker1.own - worker0.own,
          tools: worker1.children - worker0.children,
        },
      });
      return (seen - started) / 1000;
    };
    const bareRuns: number[] = [];
    const bareCpu: number[] = [];
    const bare = async (): Promise<void> => {
      const cpu0 = await cpuOf('self');
      const started = Date.now();
      await runFfmpeg(args);
      bareRuns.push((Date.now() - started) / 1000);
      bareCpu.push((await cpuOf('self')).children - cpu0.children);
    };
    const ours: Record<string, number[]> = { local: [], s3: [] };
    // Three sides, the order rotating each round (bare local s3, local s3 bare, s3 bare local, …), so
    // warm-up, caches and a slowly changing machine weigh on all alike.
    const steps: (() => Promise<void>)[] = [
      bare,
      async () => void ours.local.push(await job(sides[0])),
      async () => void ours.s3.push(await job(sides[1])),
    ];
    for (let roundIndex = 0; roundIndex < rounds; roundIndex++) {
      for (let step = 0; step < steps.length; step++) await steps[(roundIndex + step) % steps.length]();
      context.log(
        `pipeline round ${roundIndex + 1}: bare ${bareRuns.at(-1)} s, local ${ours.local.at(-1)} s, s3 ${ours.s3.at(-1)} s`,
      );
    }
    const bareSeconds = median(bareRuns);
    const common = {
      bare_ffmpeg_ms: round(bareSeconds * 1000, 1),
      bare_ffmpeg_cpu_ms: median(bareCpu),
      encode_speed_x_realtime: round(seconds / bareSeconds, 2),
      poll: `adaptive: a quarter of the time left by the job's progress, ${POLL_MS}–${SLOW_POLL_MS} ms`,
      x265_preset: DEFAULT_X265_PRESET,
      x265_crf: DEFAULT_X265_CRF,
      ffmpeg_args: args.join(' '),
    };
    const results = sides.map((side) =>
      compare(
        side.name === 'local' ? 'pipeline' : 'pipeline-s3',
        `${seconds} s ${width}×${height} sdr2hdr job on STORAGE_BACKEND=${side.name}${side.name === 's3' ? ' (Swift s3api on loopback)' : ''}, submit → succeeded × ${rounds} rounds vs the same ffmpeg command by hand`,
        { metric: 'seconds', ours: ours[side.name], bare: bareRuns, higherIsBetter: false },
        { text: '≤ 1.05 × the bare wall time', met: (ratio) => ratio <= 1.05 },
        {
          ...common,
          // Medians in ms; worker_* from the worker's own "item timings" line.
          breakdown_ms: breakdown(side.runs),
          overhead_ms: round(median(ours[side.name]) * 1000 - bareSeconds * 1000, 1),
          ...(side.name === 's3' ? { versus_local_ratio: round(median(ours.s3) / median(ours.local), 3) } : {}),
          per_round_worker: side.runs.map((run) => ({ ...run.worker.stages_ms, other: run.worker.other_ms })),
        },
      ),
    );
    return results;
  } finally {
    for (const stack of stacks) await stack.close();
    await localEnv.close();
    await s3Base.close();
    await swift.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}
