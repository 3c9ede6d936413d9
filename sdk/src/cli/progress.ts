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

/** Follows a job on stderr: a redrawn bar on a terminal, plain lines (on change) in a log or pipe. */
export function progressReporter(stderr: CliIo['stderr']): { update: (job: JobView) => void; finish: () => void } {
  const tty = stderr.isTTY === true;
  let processingSince: number | null = null;
  let lastLine = '';
  let drawn = false;
  return {
    update(job) {
      if (job.status === 'processing' && processingSince === null) processingSince = Date.now();
      const elapsed = processingSince === null ? 0 : Date.now() - processingSince;
      const line = `${job.status.padEnd(11)} ${renderProgress(job.progress, elapsed)}`;
      if (tty) {
        stderr.write(`\r\x1b[2K${line}`);
        drawn = true;
      } else {
        // Without a terminal, a line per status change or 10% step keeps logs readable.
        const key = `${job.status} ${Math.floor(job.progress * 10)}`;
        if (key !== lastLine) stderr.write(`${line}\n`);
        lastLine = key;
      }
    },
    finish() {
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
