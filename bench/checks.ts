// Benchmark: what the output checks (src/media/output-checks.ts, run by the worker's item ending) cost
// against the item's run, side by side in one run. Each job is made with the production MediaRunner
// (FfmpegMediaRunner.run: the probe and the pipeline, the worker's exact calls), then checked with the
// same runner's `check` (the worker's exact call). Part of the checks' measuring happens in the run
// (src/processing/run-measurements.ts), so "checks off" is a run of its own with measureInRun false and
// no check; "checks on" is the run as the worker makes it plus its check. The 10 s 1080p sdr2hdr job
// (balanced) and a 10 s speech job (audio, -16 LUFS).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AppConfig } from '../src/common/config/config';
import { OUTPUT_DEFAULTS, outputSpec } from '../src/jobs/output-options';
import type { OutputSpec } from '../src/media/output-spec';
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

/**
 * CPU seconds spent so far by this process (the VAD and the light meter run here) and its ended children
 * (ffmpeg, ffprobe: /proc/self/stat cutime + cstime, in clock ticks of 1/100 s). On a shared machine the
 * wall time of two runs varies more than the checks cost; the CPU they burn does not.
 */
function cpuSeconds(): number {
  const own = process.cpuUsage();
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const children = (Number(fields[13]) + Number(fields[14])) / 100;
  return (own.user + own.system) / 1e6 + children;
}

interface Timed {
  /** Checks off: the run alone (nothing measured on the way). */
  offSeconds: number;
  /** Before: that run's output checked from the file alone (every figure read back: what the check did). */
  fromFileSeconds: number;
  /** Checks on: the run measuring on the way, then its check. */
  onRunSeconds: number;
  onCheckSeconds: number;
  offCpu: number;
  fromFileCpu: number;
  onRunCpu: number;
  onCheckCpu: number;
  checks: string;
}

/** The specs the submit stores for each API's default output. */
const SPECS = {
  sdr2hdr: outputSpec({ api: 'sdr2hdr', output: OUTPUT_DEFAULTS.sdr2hdr }) as HdrSpec,
  audio: outputSpec({ api: 'audio', output: OUTPUT_DEFAULTS.audio }) as AudioSpec,
};
type HdrSpec = Extract<OutputSpec, { api: 'sdr2hdr' }>;
type AudioSpec = Extract<OutputSpec, { api: 'audio' }>;

async function runOnce(
  runner: FfmpegMediaRunner,
  input: string,
  outputPath: string,
  api: 'sdr2hdr' | 'audio',
  measureInRun: boolean,
) {
  const signal = new AbortController().signal;
  const common = {
    inputPath: input,
    outputPath,
    signal,
    timeLimitMs: 600_000,
    onProgress: () => {},
    admit: () => null,
    measureInRun,
  };
  const request: RunItemRequest =
    api === 'sdr2hdr' ? { ...common, api, output: SPECS.sdr2hdr } : { ...common, api, output: SPECS.audio };
  const started = performance.now();
  const startedCpu = cpuSeconds();
  const made = await runner.run(request);
  const ran = performance.now();
  const ranCpu = cpuSeconds();
  if (!made.ok) throw new Error(`checks bench: the ${api} run failed: ${made.code}`);
  const checked = await runner.check(
    api === 'sdr2hdr'
      ? {
          output: made as MadeOutput,
          sourcePaths: [input],
          signal,
          timeLimitMs: 600_000,
          api,
          options: SPECS.sdr2hdr,
        }
      : {
          output: made as MadeOutput,
          sourcePaths: [input],
          signal,
          timeLimitMs: 600_000,
          api,
          options: SPECS.audio,
        },
  );
  const done = performance.now();
  const doneCpu = cpuSeconds();
  if (!checked.ok) throw new Error(`checks bench: the ${api} check did not run: ${checked.code}`);
  if (measureInRun !== Boolean((made as MadeOutput).measuredInRun))
    throw new Error(`checks bench: the ${api} run measured on the way: ${String(!measureInRun)}`);
  const checks = checked.checks.map((check) => `${check.name}=${check.passed ? 'ok' : 'FAIL'}(${check.measured})`);
  return {
    runSeconds: (ran - started) / 1000,
    checkSeconds: (done - ran) / 1000,
    runCpu: ranCpu - startedCpu,
    checkCpu: doneCpu - ranCpu,
    checks: checks.join(' '),
  };
}

/**
 * Each repeat makes the job twice, back to back, in alternating order (the machine's load drifts): once
 * with checks off — then that output is also checked from the file alone, the check as it was before
 * measuring on the way — and once with checks on (the run measuring on the way, then its check).
 */
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
    const order = n % 2 === 0 ? [false, true] : [true, false];
    const results = new Map<boolean, Awaited<ReturnType<typeof runOnce>>>();
    for (const measureInRun of order)
      results.set(
        measureInRun,
        await runOnce(runner, input, join(dir, `${api}-${n}-${measureInRun}`), api, measureInRun),
      );
    const off = results.get(false)!;
    const on = results.get(true)!;
    const entry = {
      offSeconds: off.runSeconds,
      fromFileSeconds: off.checkSeconds,
      onRunSeconds: on.runSeconds,
      onCheckSeconds: on.checkSeconds,
      offCpu: off.runCpu,
      fromFileCpu: off.checkCpu,
      onRunCpu: on.runCpu,
      onCheckCpu: on.checkCpu,
      checks: on.checks,
    };
    context.log(
      `checks: ${api} off ${round(entry.offSeconds)} s (+ from the file ${round(entry.fromFileSeconds)} s), ` +
        `on ${round(entry.onRunSeconds)} s + check ${round(entry.onCheckSeconds)} s; CPU off ${round(entry.offCpu)} s ` +
        `(+ ${round(entry.fromFileCpu)} s), on ${round(entry.onRunCpu)} s + ${round(entry.onCheckCpu)} s: ${on.checks}`,
    );
    timed.push(entry);
  }
  return timed;
}

function result(api: 'sdr2hdr' | 'audio', timed: Timed[], limit: number, clip: string): BenchResult {
  const off = timed.map((entry) => entry.offSeconds);
  const on = timed.map((entry) => entry.onRunSeconds + entry.onCheckSeconds);
  const paired = timed.map((entry) => (entry.onRunSeconds + entry.onCheckSeconds) / entry.offSeconds);
  const before = timed.map((entry) => (entry.offSeconds + entry.fromFileSeconds) / entry.offSeconds);
  return compare(
    `checks-${api}`,
    `The ${api} job with its output checks (the run measuring on the way + the check) against checks off ` +
      "(the run alone), the worker's exact calls",
    { metric: 'seconds', ours: on, bare: off, higherIsBetter: false },
    {
      // Wall time is the target; on a shared machine it is noise-bound, so the CPU the checks add must agree.
      text: `checks add ≤ ${Math.round(limit * 100)} % wall time (and CPU)`,
      met: (ratio, details) => ratio <= 1 + limit && Number(details.cpu_ratio_median) <= 1 + limit,
    },
    {
      clip,
      runs: timed.length,
      run_s: round(median(off)),
      on_run_s: round(median(timed.map((entry) => entry.onRunSeconds))),
      on_check_s: round(median(timed.map((entry) => entry.onCheckSeconds))),
      // Each repeat's own ratio (its two runs back to back), and the check as it was: all from the file.
      paired_ratio_median: round(median(paired), 3),
      paired_ratios: paired.map((ratio) => round(ratio, 3)),
      from_file_check_s: round(median(timed.map((entry) => entry.fromFileSeconds))),
      from_file_ratio_median: round(median(before), 3),
      // The same in CPU seconds (cpuSeconds): the added work, whatever else the machine runs.
      cpu_ratio_median: round(median(timed.map((entry) => (entry.onRunCpu + entry.onCheckCpu) / entry.offCpu)), 3),
      cpu_from_file_ratio_median: round(
        median(timed.map((entry) => (entry.offCpu + entry.fromFileCpu) / entry.offCpu)),
        3,
      ),
      cpu_s: {
        off: round(median(timed.map((entry) => entry.offCpu))),
        from_file_check: round(median(timed.map((entry) => entry.fromFileCpu))),
        on_run: round(median(timed.map((entry) => entry.onRunCpu))),
        on_check: round(median(timed.map((entry) => entry.onCheckCpu))),
      },
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
    // The audio job is short and its runs vary more under load: more repeats cost little.
    const audio = await measure(context, 'audio', await speechClip(dir, 10), dir, repeats * 2 + 1);
    return [
      result('sdr2hdr', video, 0.05, '1920x1080 10 s, balanced, reference, PQ'),
      result('audio', audio, 0.1, '10 s speech WAV, -16 LUFS'),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
