// Benchmark: segment-parallel sdr2hdr (SEGMENT_SECONDS). One long sdr2hdr job, submit → succeeded, on
// two workers each pinned to its own core (`taskset`; the two cores stand in for two machines) with
// splitting on, against one worker pinned to one core encoding in one pass (splitting off) — in the
// same run, alternating. From the segments' own timestamps (item_segments) it reports the split, the
// encodes and the join, the join's extra bytes against the one-pass output, and a model of N workers.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createAccount, getJob, submitJob, uploadFile } from './lib/client';
import { createEnvironment } from './lib/environment';
import { keyframedSdrClip, sdrClip } from './lib/media';
import { sleep, startProcess, type Service } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { alternate, median, round } from './lib/stats';

const exec = promisify(execFile);

async function pin(service: Service, core: number): Promise<void> {
  // -a: every thread of the process; ffmpeg children inherit the affinity.
  await exec('taskset', ['-a', '-cp', String(core), String(service.pid)]);
}

interface Timing {
  wall: number;
  split: number;
  encodes: number[];
  join: number;
  segments: number;
  sizeBytes: number;
  workers: number;
}

export async function benchSegments(context: BenchContext): Promise<BenchResult> {
  // BENCH_SEGMENT_CLIP=<width>x<height>x<seconds>x<segment seconds> overrides the clip (e.g. on a loaded machine).
  const override = process.env.BENCH_SEGMENT_CLIP?.split('x').map(Number);
  const [width, height, seconds, segmentSeconds] =
    override?.length === 4 ? override : context.quick ? [640, 360, 20, 5] : [1280, 720, 60, 10];
  const rounds = context.quick ? 1 : Number(process.env.BENCH_SEGMENT_ROUNDS ?? 2);
  const clip = await keyframedSdrClip(width, height, seconds, 2);
  const env = await createEnvironment('segments');
  const services: Service[] = [];
  try {
    const api = await startProcess('dist/src/main.js', { ...env.serviceEnv, REGION: 'bseg2' });
    services.push(api);
    const worker = async (region: string, split: number, core: number) => {
      const service = await startProcess(
        'dist/src/worker.js',
        { ...env.serviceEnv, REGION: region, WORKER_CONCURRENCY: '1', SEGMENT_SECONDS: String(split) },
        { listen: false },
      );
      services.push(service);
      await pin(service, core);
    };
    await worker('bseg2', segmentSeconds, 0);
    await worker('bseg2', segmentSeconds, 1);
    await worker('bseg1', 0, 0);
    const account = await createAccount(env, api.url, 10_000_000);
    const submit = async (region: string, uploadId: string): Promise<string> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return (await submitJob(api.url, account.apiKey, { inputs: [{ upload_id: uploadId }], region })).job_id;
        } catch (error) {
          if (attempt > 200 || !String(error).includes('region_unavailable')) throw error;
          await sleep(100);
        }
      }
    };
    const finish = async (jobId: string): Promise<any> => {
      for (;;) {
        const job = await getJob(api.url, account.apiKey, jobId);
        if (!['queued', 'processing'].includes(job.status)) {
          if (job.status !== 'succeeded') throw new Error(`segments: job ${jobId} ended ${job.status}`);
          return job;
        }
        await sleep(100);
      }
    };
    // Warm-up on both regions (not measured).
    const warm = await uploadFile(api.url, account.apiKey, await sdrClip(320, 180, 1));
    await finish(await submit('bseg2', warm));
    await finish(await submit('bseg1', warm));
    const uploadId = await uploadFile(api.url, account.apiKey, clip);

    const timings: Record<'ours' | 'bare', Timing[]> = { ours: [], bare: [] };
    const run = (kind: 'ours' | 'bare') => async () => {
      const started = Date.now();
      const jobId = await submit(kind === 'ours' ? 'bseg2' : 'bseg1', uploadId);
      const job = await finish(jobId);
      const wall = (Date.now() - started) / 1000;
      const segments = await env.query<{ created_at: Date; started_at: Date; finished_at: Date; worker: string }>(
        `SELECT created_at, started_at, finished_at, worker FROM item_segments WHERE job_id = $1 ORDER BY segment`,
        [jobId],
      );
      const jobStart = Date.parse(job.started_at);
      const lastEncode = Math.max(...segments.map((segment) => segment.finished_at.getTime()));
      timings[kind].push({
        wall,
        split: segments.length ? (segments[0].created_at.getTime() - jobStart) / 1000 : 0,
        encodes: segments.map((segment) => (segment.finished_at.getTime() - segment.started_at.getTime()) / 1000),
        join: segments.length ? (Date.parse(job.finished_at) - lastEncode) / 1000 : 0,
        segments: segments.length,
        sizeBytes: job.items[0].output.size_bytes,
        workers: new Set(segments.map((segment) => segment.worker)).size,
      });
      context.log(`segments: ${kind} ${round(wall)} s (${segments.length} segments)`);
      return wall;
    };
    const runs = await alternate<number>(rounds, run('ours'), run('bare'));

    const ours = timings.ours;
    const split = median(ours.map((timing) => timing.split));
    const join = median(ours.map((timing) => timing.join));
    const encode = median(ours.flatMap((timing) => timing.encodes));
    const onePass = median(runs.bare);
    const extraBytes = median(ours.map((timing) => timing.sizeBytes)) - median(timings.bare.map((t) => t.sizeBytes));
    // The model, per second of video at this resolution: split and join scale with the length and run
    // once (one worker), the encodes of ceil(segments / N) segments run one after another on each worker.
    const perSecond = {
      split: split / seconds,
      join: join / seconds,
      encode: encode / segmentSeconds,
      onePass: onePass / seconds,
    };
    const tenMinutes = 600;
    const segmentsOf10 = Math.ceil(tenMinutes / segmentSeconds);
    const model = Object.fromEntries(
      [1, 4, 16].map((n) => [
        `workers_${n}`,
        round(
          n === 1
            ? perSecond.onePass * tenMinutes
            : (perSecond.split + perSecond.join) * tenMinutes +
                Math.ceil(segmentsOf10 / n) * perSecond.encode * segmentSeconds,
          0,
        ),
      ]),
    );
    return compare(
      'segments',
      `${seconds} s ${width}×${height} sdr2hdr job (SEGMENT_SECONDS=${segmentSeconds}), submit → succeeded × ${rounds}: 2 workers pinned to a core each (taskset -c 0 / -c 1) vs 1 worker pinned to one core, one pass`,
      { metric: 'seconds', ours: runs.ours, bare: runs.bare, higherIsBetter: false },
      { text: '≤ 0.6 × the one-worker wall time', met: (ratio) => ratio <= 0.6 },
      {
        segments: ours[0]?.segments,
        segment_workers: ours[0]?.workers,
        split_seconds: round(split, 2),
        encode_seconds_per_segment_median: round(encode, 2),
        join_seconds: round(join, 2),
        one_pass_seconds: round(onePass, 2),
        output_bytes_one_pass: median(timings.bare.map((t) => t.sizeBytes)),
        output_bytes_segmented: median(ours.map((timing) => timing.sizeBytes)),
        extra_bytes: extraBytes,
        extra_bytes_percent: round((100 * extraBytes) / median(timings.bare.map((t) => t.sizeBytes)), 2),
        model_10_minutes_seconds: model,
        model_note:
          'T(1) = one pass; T(N) = split + join (both ∝ length, one worker) + ceil(segments / N) × one segment encode; queue hand-offs and storage copies inside the measured split/join/encode',
      },
    );
  } finally {
    for (const service of services.reverse()) await service.stop();
    await env.close();
  }
}
