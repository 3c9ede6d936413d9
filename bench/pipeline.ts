// Benchmark 4: the wall time of an sdr2hdr job from submit to `succeeded` (our API, queue, worker
// and pipeline; the client polls every 50 ms) against the same ffmpeg command line run by hand on
// the same file — the overhead of everything around the encode.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSdrToHdrArgs, DEFAULT_X265_CRF, DEFAULT_X265_PRESET } from '../src/media/ffmpeg-args';
import { probeMedia } from '../src/media/probe';
import { uploadFile } from './lib/client';
import { createEnvironment } from './lib/environment';
import { sdrClip } from './lib/media';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { startStack, submitWhenReady, waitForJob } from './lib/stack';
import { alternate, median, round } from './lib/stats';

const REGION = 'benchp';

function runFfmpeg(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}`))));
  });
}

export async function benchPipeline(context: BenchContext): Promise<BenchResult> {
  const [width, height, seconds] = context.quick ? [640, 360, 1] : [1920, 1080, 10];
  const rounds = context.quick ? 1 : 3;
  const clip = await sdrClip(width, height, seconds);
  const env = await createEnvironment('pipeline');
  const stack = await startStack(env, REGION, 1_000_000);
  const scratch = await mkdtemp(join(tmpdir(), 'mediajobs-bench-pipeline-'));
  try {
    // Warm-up (not measured): the worker's first heartbeat, the processes' JIT and file caches.
    const warmUp = await uploadFile(stack.api.url, stack.account.apiKey, await sdrClip(320, 180, 1));
    await waitForJob(stack, (await submitWhenReady(stack, { inputs: [{ upload_id: warmUp }] })).job_id);
    const uploadId = await uploadFile(stack.api.url, stack.account.apiKey, clip);
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
    // Where our extra time goes: submit → started (API, queue), started → finished (worker).
    const queueSeconds: number[] = [];
    const workerSeconds: number[] = [];
    const ours = async () => {
      const started = Date.now();
      const submitted = await submitWhenReady(stack, { inputs: [{ upload_id: uploadId }] });
      const job = await waitForJob(stack, submitted.job_id);
      if (job.status !== 'succeeded') throw new Error(`pipeline: job ${job.job_id} ended ${job.status}`);
      const seconds = (Date.now() - started) / 1000;
      queueSeconds.push((Date.parse(job.started_at) - Date.parse(job.created_at)) / 1000);
      workerSeconds.push((Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000);
      return seconds;
    };
    const bare = async () => {
      const started = Date.now();
      await runFfmpeg(args);
      return (Date.now() - started) / 1000;
    };
    const runs = await alternate<number>(rounds, ours, bare);
    const bareSeconds = median(runs.bare);
    return compare(
      'pipeline',
      `${seconds} s ${width}×${height} sdr2hdr job, submit → succeeded × ${rounds} rounds vs the same ffmpeg command by hand`,
      { metric: 'seconds', ours: runs.ours, bare: runs.bare, higherIsBetter: false },
      { text: '≤ 1.05 × the bare wall time', met: (ratio) => ratio <= 1.05 },
      {
        ours_submit_to_start_seconds: round(median(queueSeconds), 3),
        ours_start_to_finish_seconds: round(median(workerSeconds), 3),
        encode_speed_x_realtime: round(seconds / bareSeconds, 2),
        x265_preset: DEFAULT_X265_PRESET,
        x265_crf: DEFAULT_X265_CRF,
        ffmpeg_args: args.join(' '),
      },
    );
  } finally {
    await stack.close();
    await rm(scratch, { recursive: true, force: true });
    await env.close();
  }
}
