// Spawns ffmpeg/ffprobe (argv only, never a shell) under a wall-clock limit and an AbortSignal, keeps
// the tail of stderr for logs, and turns `-progress pipe:1` blocks into a throttled 0–1 fraction.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export const DEFAULT_STDERR_LINES = 50;
export const DEFAULT_PROGRESS_INTERVAL_MS = 1000;
const MAX_LINE_CHARS = 2000;

export type MediaProcessStatus =
  /** Exit code 0. */
  | 'succeeded'
  /** Non-zero exit, or a signal other than an outside SIGKILL. */
  | 'failed'
  /** The wall-clock limit passed and we killed the process. */
  | 'timeout'
  /** The caller's AbortSignal fired and we killed the process. */
  | 'aborted'
  /** SIGKILL that we did not send: the kernel OOM killer (or an operator) — classify as out_of_memory. */
  | 'killed';

export interface MediaProcessResult {
  status: MediaProcessStatus;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  wallMs: number;
  /** Last lines of stderr, for logs only: they can contain paths and URLs, never show them to clients. */
  stderrTail: string[];
}

export interface MediaProcessOptions {
  signal?: AbortSignal;
  /** Wall-clock budget; the process is SIGKILLed when it passes. */
  timeLimitMs?: number;
  stderrLines?: number;
  /**
   * Receives stdout as it arrives. When it answers a promise, stdout is paused until it settles (the
   * tool then waits on a full pipe: back-pressure for a slower reader). If it throws or the promise
   * rejects, the process is killed and the run rejects with that error.
   */
  onStdout?: (chunk: Buffer) => unknown;
}

/**
 * util-linux's setpriv (on every Debian system) starts the tool with PR_SET_PDEATHSIG=SIGKILL: when the
 * process that spawned it dies, even by SIGKILL, the kernel kills the tool too, so no encode outlives
 * its worker. Without setpriv the tool is started directly (and may outlive a killed worker).
 */
export const SETPRIV_PATH = '/usr/bin/setpriv';
const PDEATHSIG_AVAILABLE = existsSync(SETPRIV_PATH);
// setpriv's exit codes when it cannot exec the tool (util-linux's EX_EXEC_FAILED, EX_EXEC_ENOENT).
const SETPRIV_EXEC_FAILED = new Set([126, 127]);

/** The argv that runs `command` so that it dies with this process (see SETPRIV_PATH). */
export function diesWithParent(command: string, args: string[]): { command: string; args: string[] } {
  if (!PDEATHSIG_AVAILABLE) return { command, args };
  return { command: SETPRIV_PATH, args: ['--pdeathsig', 'KILL', '--', command, ...args] };
}

/** Runs one media process to its end. Rejects only when it cannot start or `onStdout` threw. */
export function runMediaProcess(
  command: string,
  args: string[],
  options: MediaProcessOptions = {},
): Promise<MediaProcessResult> {
  const started = Date.now();
  const tail = new LineTail(options.stderrLines ?? DEFAULT_STDERR_LINES);
  if (options.signal?.aborted) {
    return Promise.resolve({ status: 'aborted', exitCode: null, exitSignal: null, wallMs: 0, stderrTail: [] });
  }
  return new Promise((resolve, reject) => {
    const launch = diesWithParent(command, args);
    const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let killedFor: 'timeout' | 'aborted' | 'error' | null = null;
    let callbackError: unknown;
    let settled = false;

    const kill = (reason: 'timeout' | 'aborted' | 'error'): void => {
      killedFor ??= reason;
      // SIGKILL: ffmpeg may ignore or be slow on SIGTERM while flushing; a cancel must stop within 2 s.
      child.kill('SIGKILL');
    };
    const onAbort = (): void => kill('aborted');
    const timer =
      options.timeLimitMs !== undefined ? setTimeout(() => kill('timeout'), options.timeLimitMs) : undefined;
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const cleanup = (): void => {
      settled = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };

    const callbackFailed = (error: unknown): void => {
      callbackError = error;
      kill('error');
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (!options.onStdout || killedFor === 'error') return;
      try {
        const reading = options.onStdout(chunk);
        if (isThenable(reading)) {
          child.stdout.pause();
          reading.then(() => child.stdout.resume(), callbackFailed);
        }
      } catch (error) {
        callbackFailed(error);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => tail.push(chunk.toString('utf8')));

    child.on('error', (error) => {
      if (settled) return;
      cleanup();
      reject(new Error(`cannot run ${command}: ${error.message}`));
    });
    child.on('close', (exitCode, exitSignal) => {
      if (settled) return;
      cleanup();
      if (killedFor === 'error') {
        reject(callbackError instanceof Error ? callbackError : new Error(String(callbackError)));
        return;
      }
      const lines = tail.lines();
      const execFailure = lines.find((line) => line.startsWith('setpriv: failed to execute'));
      if (launch.command === SETPRIV_PATH && SETPRIV_EXEC_FAILED.has(exitCode ?? 0) && execFailure) {
        reject(new Error(`cannot run ${command}: ${execFailure}`));
        return;
      }
      resolve({
        status: statusOf(exitCode, exitSignal, killedFor),
        exitCode,
        exitSignal,
        wallMs: Date.now() - started,
        stderrTail: lines,
      });
    });
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function statusOf(
  exitCode: number | null,
  exitSignal: NodeJS.Signals | null,
  killedFor: 'timeout' | 'aborted' | null,
): MediaProcessStatus {
  if (killedFor) return killedFor;
  if (exitCode === 0) return 'succeeded';
  return exitSignal === 'SIGKILL' ? 'killed' : 'failed';
}

// --- ffmpeg with progress -----------------------------------------------------------------------------

export interface RunFfmpegOptions extends Omit<MediaProcessOptions, 'onStdout'> {
  ffmpegPath?: string;
  /** Input duration, to turn out_time into a fraction; without it no progress is reported. */
  durationSeconds?: number;
  /** Called with increasing values in [0, 1); 1 exactly once when ffmpeg exits successfully. Must not throw. */
  onProgress?: (fraction: number) => void;
  /** Minimum time between two progress calls (the final 1 is never held back). */
  progressIntervalMs?: number;
  /**
   * The most output (seconds of out_time) this run may write: past it ffmpeg is killed and the result
   * says `overran` — the input held more than was probed and priced (a header that lies, a file
   * that grew), and it is never encoded for longer than that.
   */
  maxOutSeconds?: number;
}

export interface RunFfmpegResult extends MediaProcessResult {
  /** Last out_time ffmpeg reported (seconds of output written), null if it never reported one. */
  outTimeSeconds: number | null;
  /** Killed because out_time passed `maxOutSeconds` (status 'failed'). */
  overran: boolean;
}

/** Runs ffmpeg whose argv contains `-progress pipe:1` (the builders in hdr-args.ts and loudness-args.ts all do). */
export async function runFfmpeg(args: string[], options: RunFfmpegOptions = {}): Promise<RunFfmpegResult> {
  const parser = new FfmpegProgressParser();
  const throttle = new ProgressThrottle(options.onProgress, options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  let outTimeSeconds: number | null = null;
  const overrun = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, overrun.signal]) : overrun.signal;
  const result = await runMediaProcess(options.ffmpegPath ?? defaultFfmpegPath(), args, {
    signal,
    timeLimitMs: options.timeLimitMs,
    stderrLines: options.stderrLines,
    onStdout: (chunk) => {
      for (const block of parser.push(chunk.toString('utf8'))) {
        if (block.outTimeSeconds === null) continue;
        outTimeSeconds = block.outTimeSeconds;
        if (options.maxOutSeconds !== undefined && block.outTimeSeconds > options.maxOutSeconds) overrun.abort();
        if (options.durationSeconds && options.durationSeconds > 0) {
          throttle.report(block.outTimeSeconds / options.durationSeconds);
        }
      }
    },
  });
  // The caller's own abort wins: a cancel is a cancel, whatever was written.
  const overran = overrun.signal.aborted && !options.signal?.aborted;
  if (overran) return { ...result, status: 'failed', outTimeSeconds, overran };
  if (result.status === 'succeeded') throttle.complete();
  return { ...result, outTimeSeconds, overran };
}

export function defaultFfmpegPath(): string {
  return process.env.FFMPEG_PATH || 'ffmpeg';
}

export function defaultFfprobePath(): string {
  return process.env.FFPROBE_PATH || 'ffprobe';
}

export interface ProgressBlock {
  outTimeSeconds: number | null;
  /** 'continue' while running, 'end' on the last block. */
  progress: string;
  fields: Record<string, string>;
}

/** Parses ffmpeg's `-progress` stream: key=value lines, each block closed by a `progress=` line. */
export class FfmpegProgressParser {
  private partial = '';
  private fields: Record<string, string> = {};

  push(text: string): ProgressBlock[] {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    const blocks: ProgressBlock[] = [];
    for (const raw of lines) {
      const line = raw.trim();
      const eq = line.indexOf('=');
      if (eq <= 0) continue;
      const key = line.slice(0, eq);
      this.fields[key] = line.slice(eq + 1);
      if (key === 'progress') {
        blocks.push({ outTimeSeconds: outTimeOf(this.fields), progress: this.fields.progress, fields: this.fields });
        this.fields = {};
      }
    }
    return blocks;
  }
}

function outTimeOf(fields: Record<string, string>): number | null {
  // ffmpeg 5.1 prints out_time_us and out_time_ms, both in microseconds (the _ms name is a historic bug).
  for (const key of ['out_time_us', 'out_time_ms']) {
    const value = Number(fields[key]);
    if (fields[key] !== undefined && Number.isFinite(value) && value >= 0) return value / 1e6;
  }
  const clock = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(fields.out_time ?? '');
  return clock ? Number(clock[1]) * 3600 + Number(clock[2]) * 60 + Number(clock[3]) : null;
}

/** Emits strictly increasing fractions, at most one per interval; values stay below 1 until `complete()`. */
export class ProgressThrottle {
  private last = -1;
  private lastAt = -Infinity;

  constructor(
    private readonly onProgress: ((fraction: number) => void) | undefined,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  report(fraction: number): void {
    // 1 means "done and written", which only the exit code can tell.
    const value = Math.min(0.99, Math.max(0, Math.round(fraction * 1000) / 1000));
    if (value <= this.last || this.now() - this.lastAt < this.intervalMs) return;
    this.emit(value);
  }

  complete(): void {
    if (this.last < 1) this.emit(1);
  }

  private emit(value: number): void {
    this.last = value;
    this.lastAt = this.now();
    this.onProgress?.(value);
  }
}

/** Keeps the last N lines of a text stream (\n or \r separated), each line capped in length. */
class LineTail {
  private readonly buffer: string[] = [];
  private partial = '';

  constructor(private readonly max: number) {}

  push(text: string): void {
    const parts = (this.partial + text).split(/\r\n|\n|\r/);
    this.partial = (parts.pop() ?? '').slice(-MAX_LINE_CHARS);
    for (const line of parts) this.add(line);
  }

  lines(): string[] {
    return this.partial ? [...this.buffer, this.partial].slice(-this.max) : [...this.buffer];
  }

  private add(line: string): void {
    if (!line) return;
    this.buffer.push(line.slice(0, MAX_LINE_CHARS));
    if (this.buffer.length > this.max) this.buffer.shift();
  }
}
