// Benchmark: what the output checks (src/media/output-checks.ts, run by the worker's item ending) cost
// against the item's run, side by side in one run. Each job is made with the production MediaRunner
// (FfmpegMediaRunner.run: the probe and the pipeline, the worker's exact calls), then checked with the
// same runner's `check` (the worker's exact call): "checks off" is the run alone, "checks on" the run
// plus its check. The 10 s 1080p sdr2hdr job (balanced) and a 10 s speech job (audio, -16 LUFS).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AppConfig } from '../src/common/config/config';
import { OUTPUT_DEFAULTS } from '../src/jobs/output-options';
import { FfmpegMediaRunner } from '../src/processing/ffmpeg-media-runner';
import type { MadeOutput, RunItemRequest } from '../src/processing/media-runner';
import { speechWav } from '../test/fixtures/media';
import { sdrClip } from './lib/media';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, round } from './lib/stats';

const run = promisify(execFile);

/** What the runner reads of the configuration. */
const CONFIG = { ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', workerMaxPixels: 3840 * 2160 } as AppConfig;

async function speechClip(dir: string, seconds: number): Promise<string> {
  const path = join(dir, `speech-${seconds}s.wav`);
  await run(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-y', '-stream_loop', '-1', '-i', await speechWav()].concat([
      '-t',
      String(seconds),
      '-c:a',
      'pcm_s16le',
      path,
    ]),
  );
  return path;
}

interface Timed {
  runSeconds: number;
  checkSeconds: number;
  checks: string;
}

async function runAndCheck(runner: FfmpegMediaRunner, input: string, outputPath: string, api: 'sdr2hdr' | 'audio') {
  const signal = new AbortController().signal;
  const common = {
    inputPath: input,
    outputPath,
    signal,
    timeLimitMs: 600_000,
    onProgress: () => {},
    admit: () => null,
  };
  const request: RunItemRequest =
    api === 'sdr2hdr'
      ? { ...common, api, output: OUTPUT_DEFAULTS.sdr2hdr, targetHeight: undefined }
      : { ...common, api, output: OUTPUT_DEFAULTS.audio };
  const started = performance.now();
  const made = await runner.run(request);
  const ran = performance.now();
  if (!made.ok) throw new Error(`checks bench: the ${api} run failed: ${made.code}`);
  const checked = await runner.check(
    api === 'sdr2hdr'
      ? {
          output: made as MadeOutput,
          sourcePaths: [input],
          signal,
          timeLimitMs: 600_000,
          api,
          options: OUTPUT_DEFAULTS.sdr2hdr,
        }
      : {
          output: made as MadeOutput,
          sourcePaths: [input],
          signal,
          timeLimitMs: 600_000,
          api,
          options: OUTPUT_DEFAULTS.audio,
        },
  );
  const done = performance.now();
  if (!checked.ok) throw new Error(`checks bench: the ${api} check did not run: ${checked.code}`);
  const checks = checked.checks.map((check) => `${check.name}=${check.passed ? 'ok' : 'FAIL'}(${check.measured})`);
  return { runSeconds: (ran - started) / 1000, checkSeconds: (done - ran) / 1000, checks: checks.join(' ') };
}

async function measure(
  context: BenchContext,
  api: 'sdr2hdr' | 'audio',
  input: string,
  dir: string,
  repeats: number,
): Promise<Timed[]> {
  const runner = new FfmpegMediaRunner(CONFIG);
  const timed: Timed[] = [];
  for (let n = 0; n < repeats; n++) {
    const result = await runAndCheck(runner, input, join(dir, `${api}-${n}`), api);
    context.log(
      `checks: ${api} run ${round(result.runSeconds)} s, checks ${round(result.checkSeconds)} s: ${result.checks}`,
    );
    timed.push(result);
  }
  return timed;
}

function result(api: 'sdr2hdr' | 'audio', timed: Timed[], limit: number, clip: string): BenchResult {
  const off = timed.map((entry) => entry.runSeconds);
  const on = timed.map((entry) => entry.runSeconds + entry.checkSeconds);
  return compare(
    `checks-${api}`,
    `The ${api} job with its output checks (run + check) against checks off (the run alone), the worker's exact calls`,
    { metric: 'seconds', ours: on, bare: off, higherIsBetter: false },
    { text: `checks add ≤ ${Math.round(limit * 100)} % wall time`, met: (ratio) => ratio <= 1 + limit },
    {
      clip,
      runs: timed.length,
      run_s: round(median(off)),
      checks_s: round(median(timed.map((entry) => entry.checkSeconds))),
      checks: timed[timed.length - 1].checks,
    },
  );
}

export async function benchChecks(context: BenchContext): Promise<BenchResult[]> {
  // The 10 s 1080p job is what the target is about, so --quick keeps it and runs each job once.
  const repeats = context.quick ? 1 : 3;
  const dir = await mkdtemp(join(tmpdir(), 'mediajobs-bench-checks-'));
  try {
    const video = await measure(context, 'sdr2hdr', await sdrClip(1920, 1080, 10), dir, repeats);
    const audio = await measure(context, 'audio', await speechClip(dir, 10), dir, repeats);
    return [
      result('sdr2hdr', video, 0.05, '1920x1080 10 s, balanced, reference, PQ'),
      result('audio', audio, 0.1, '10 s speech WAV, -16 LUFS'),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
