#!/usr/bin/env node
// The `mediajobs` command (bin of the package). The commands live in cli/: main.ts reads the command
// line and runs one; transfer.ts converts media; account.ts, jobs.ts and webhooks.ts print what the
// API holds; listen.ts forwards events.
import { EXIT_UNKNOWN } from './cli/exit-codes.js';
import { main } from './cli/main.js';

export { main } from './cli/main.js';
export { DEFAULT_BASE_URL, USAGE, USAGE_HINT } from './cli/help.js';
export { EXIT_CODES, EXIT_UNKNOWN, exitCodeFor, formatError } from './cli/exit-codes.js';
export { formatBytes, formatDuration, plural } from './cli/format.js';
export { renderProgress } from './cli/progress.js';
export type { CliIo } from './cli/io.js';

if (require.main === module) {
  const interrupted = new AbortController();
  for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => interrupted.abort());
  main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: interrupted.signal,
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`error: ${String(error)}\n`);
      process.exitCode = EXIT_UNKNOWN;
    },
  );
}
