// Benchmark 5 (worker part): the worker's peak resident memory converting a small and a large
// (≥ 500 MB) input. The worker streams — its input is a file ffmpeg reads, its output is copied to
// storage as a stream — so the large input must not cost it more memory than the small one. The
// API's resident memory is measured by the reads benchmark.
import { statSync } from 'node:fs';
import { uploadFile } from './lib/client';
import { createEnvironment } from './lib/environment';
import { largeClip, sdrClip } from './lib/media';
import { memoryOf } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { startStack, startWorker, submitWhenReady, waitForJob, watchChildren, type Stack } from './lib/stack';
import { round } from './lib/stats';

const REGION = 'benchm';

/** Converts one input on a fresh worker process and returns that process's peak RSS (and ffmpeg's). */
async function convertOnFreshWorker(
  stack: Stack,
  path: string,
  restart: () => Promise<void>,
): Promise<{ workerPeakMiB: number; ffmpegPeakMiB: number; apiRssAfterUploadMiB: number; seconds: number }> {
  await restart();
  const uploadId = await uploadFile(stack.api.url, stack.account.apiKey, path);
  const apiRssAfterUploadMiB = (await memoryOf(stack.api.pid)).rssMiB;
  const children = watchChildren(stack.worker.pid);
  const started = Date.now();
  const submitted = await submitWhenReady(stack, { inputs: [{ upload_id: uploadId }], output: { resolution: '720p' } });
  const job = await waitForJob(stack, submitted.job_id, 500);
  if (job.status !== 'succeeded') throw new Error(`memory: job ended ${job.status}: ${JSON.stringify(job.error)}`);
  const seconds = (Date.now() - started) / 1000;
  const ffmpegPeakMiB = children.stop();
  const { peakRssMiB } = await memoryOf(stack.worker.pid);
  return { workerPeakMiB: peakRssMiB, ffmpegPeakMiB, apiRssAfterUploadMiB, seconds };
}

export async function benchMemory(context: BenchContext): Promise<BenchResult> {
  const small = await sdrClip(1920, 1080, 1);
  // Quick mode keeps the shape (1080p MPEG-2 at 400 Mbit/s) but not the size.
  const large = await largeClip(context.quick ? 1 : 12);
  const env = await createEnvironment('memory');
  const stack = await startStack(env, REGION, 1_000_000);
  const restart = async () => {
    await stack.worker.stop();
    stack.worker = await startWorker(env, REGION);
  };
  try {
    context.log(
      `memory: small input ${round(statSync(small).size / 2 ** 20, 1)} MiB, large ${round(large.sizeBytes / 2 ** 20, 1)} MiB`,
    );
    const smallRun = await convertOnFreshWorker(stack, small, restart);
    const largeRun = await convertOnFreshWorker(stack, large.path, restart);
    return compare(
      'memory',
      `worker peak RSS converting a ${round(statSync(small).size / 2 ** 20, 1)} MiB vs a ${round(large.sizeBytes / 2 ** 20)} MiB input (each on a fresh worker, output 720p)`,
      {
        metric: 'worker peak RSS MiB',
        ours: [largeRun.workerPeakMiB],
        bare: [smallRun.workerPeakMiB],
        higherIsBetter: false,
      },
      {
        text: 'large-input peak ≤ 1.10 × small-input peak (and the large input ≥ 500 MB in a full run)',
        met: (ratio) => ratio <= 1.1 && (context.quick || large.sizeBytes >= 500e6),
      },
      {
        large_input_bytes: large.sizeBytes,
        small_input_bytes: statSync(small).size,
        worker_peak_rss_small_mib: round(smallRun.workerPeakMiB, 1),
        worker_peak_rss_large_mib: round(largeRun.workerPeakMiB, 1),
        ffmpeg_peak_rss_small_mib: round(smallRun.ffmpegPeakMiB, 1),
        ffmpeg_peak_rss_large_mib: round(largeRun.ffmpegPeakMiB, 1),
        api_rss_after_large_upload_mib: round(largeRun.apiRssAfterUploadMiB, 1),
        large_job_seconds: round(largeRun.seconds, 1),
      },
    );
  } finally {
    await stack.close();
    await env.close();
  }
}
