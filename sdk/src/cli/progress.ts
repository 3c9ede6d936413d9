// Progress on stderr: a redrawn line on a terminal, a few plain lines in a log or pipe.
import type { JobView } from '../types.js';
import { formatBytes, formatDuration } from './format.js';
import type { CliIo } from './io.js';

/** One progress line: bar, percentage and an ETA extrapolated from the time spent so far. */
export function renderProgress(progress: number, elapsedMs: number, width = 30): string {
  const fraction = Math.min(1, Math.max(0, progress));
  const filled = Math.round(fraction * width);
  // No ETA until there is both progress and elapsed time to extrapolate from.
  const eta =
    fraction > 0 && fraction < 1 && elapsedMs > 0 ? formatDuration((elapsedMs * (1 - fraction)) / fraction) : '--:--';
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ETA ${eta}`;
}

/** What the job is doing: its status, or while processing the phase of its first processing item. */
export function jobPhase(job: JobView): string {
  if (job.status !== 'processing') return job.status;
  return job.items.find((item) => item.status === 'processing')?.phase ?? job.status;
}

/** How often a terminal's bar is redrawn between polls (the server's progress comes once a second at best). */
const REDRAW_MS = 250;

export interface ProgressClock {
  now(): number;
  /** Starts a redraw timer on a terminal; returns its stop. */
  every(ms: number, tick: () => void): () => void;
}

const systemClock: ProgressClock = {
  now: () => Date.now(),
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

/** The bar and what follows it: an ETA while encoding, the phase's own time while an item joins or stores. */
function progressLine(phase: string, progress: number, elapsedMs: number, phaseMs: number): string {
  const still = phase === 'joining' || phase === 'storing';
  const bar = still
    ? `${renderProgress(progress, 0).replace(/ ETA .*$/, '')} ${formatDuration(phaseMs)}`
    : renderProgress(progress, elapsedMs);
  return `${phase.padEnd(11)} ${bar}`;
}

/**
 * Follows a job on stderr: a redrawn bar on a terminal, plain lines (on change) in a log or pipe. The
 * line names the phase (encoding, joining, storing) while the job processes, and while an item joins
 * or stores (its progress stands still) how long that has taken instead of an ETA. On a terminal the
 * bar moves smoothly: each poll's progress is reached over the time the last poll took to come, so the
 * bar runs a poll behind the server but never ahead of it, and never back.
 */
export function progressReporter(
  stderr: CliIo['stderr'],
  clock: ProgressClock = systemClock,
): { update: (job: JobView) => void; finish: () => void } {
  const tty = stderr.isTTY === true;
  let processingSince: number | null = null;
  let lastLine = '';
  let drawn = false;
  let stopRedraw: (() => void) | null = null;
  let phaseSince = 0;
  let phase = '';
  let target = 0;
  /** The animation from the progress shown at the last poll to the poll's progress, over `span` ms. */
  let from = 0;
  let at = 0;
  let span = 1000;

  const shownAt = (now: number): number => from + (target - from) * Math.min(1, (now - at) / span);
  const draw = (): void => {
    const now = clock.now();
    const elapsed = processingSince === null ? 0 : now - processingSince;
    stderr.write(`\r\x1b[2K${progressLine(phase, shownAt(now), elapsed, now - phaseSince)}`);
    drawn = true;
  };

  return {
    update(job) {
      const now = clock.now();
      if (job.status === 'processing' && processingSince === null) processingSince = now;
      const current = jobPhase(job);
      if (current !== phase) phaseSince = now;
      phase = current;
      const ended = job.status !== 'processing' && job.status !== 'queued';
      from = ended ? job.progress : Math.min(shownAt(now), job.progress);
      if (at > 0) span = Math.max(REDRAW_MS, now - at);
      at = now;
      target = job.progress;
      if (tty) {
        draw();
        if (ended) stopRedraw?.();
        else stopRedraw ??= clock.every(REDRAW_MS, draw);
        return;
      }
      // Without a terminal, a line per status or phase change or 10% step keeps logs readable.
      const elapsed = processingSince === null ? 0 : now - processingSince;
      const key = `${phase} ${Math.floor(job.progress * 10)}`;
      if (key !== lastLine) stderr.write(`${progressLine(phase, job.progress, elapsed, now - phaseSince)}\n`);
      lastLine = key;
    },
    finish() {
      stopRedraw?.();
      stopRedraw = null;
      if (drawn) stderr.write('\n');
    },
  };
}

/**
 * Byte progress of an upload or a download on stderr: a redrawn line on a terminal; otherwise a line
 * at the start, at each quarter and at the end, so logs stay short.
 */
export function byteProgress(stderr: CliIo['stderr'], verb: string, name: string, total: number | null) {
  const tty = stderr.isTTY === true;
  let lastStep = -1;
  let drawn = false;
  const line = (bytes: number): string =>
    total
      ? `${verb} ${name}: ${formatBytes(bytes)} of ${formatBytes(total)} (${Math.floor((Math.min(bytes, total) / total) * 100)}%)`
      : `${verb} ${name}: ${formatBytes(bytes)}`;
  return {
    update(bytes: number): void {
      if (tty) {
        stderr.write(`\r\x1b[2K${line(bytes)}`);
        drawn = true;
        return;
      }
      const step = total ? Math.floor((Math.min(bytes, total) / total) * 4) : lastStep + 1;
      if (step !== lastStep && (total !== null || bytes === 0)) stderr.write(`${line(bytes)}\n`);
      lastStep = step;
    },
    finish(bytes: number): void {
      if (tty) stderr.write(`\r\x1b[2K${line(bytes)}\n`);
      else if (!drawn && lastStep !== (total ? 4 : -2)) stderr.write(`${line(bytes)}\n`);
    },
  };
}
