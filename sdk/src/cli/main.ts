// The `mediajobs` command: reads the command, builds the client, runs one command, and turns every
// failure into one stderr line and an exit code that tells its family (exit-codes.ts).
import { MediaJobs } from '../client.js';
import { MediaJobsError } from '../errors.js';
import { VERSION } from '../version.js';
import { credits, keys, ledger } from './account.js';
import { UsageError } from './args.js';
import { EXIT_CODES, EXIT_UNKNOWN, exitCodeFor, formatError } from './exit-codes.js';
import { asksForHelp, commandHint, DEFAULT_BASE_URL, helpFor, USAGE_HINT } from './help.js';
import type { CliIo } from './io.js';
import { jobs } from './jobs.js';
import { listen } from './listen.js';
import { audio, convert, estimateCommand } from './transfer.js';
import { webhooks } from './webhooks.js';

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'help') {
    io.stdout.write(helpFor(rest));
    return 0;
  }
  if (asksForHelp(argv)) {
    io.stdout.write(helpFor(argv));
    return 0;
  }
  if (command === '--version') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  try {
    const apiKey = io.env.MEDIAJOBS_API_KEY;
    const baseUrl = io.env.MEDIAJOBS_BASE_URL || DEFAULT_BASE_URL;
    if (!apiKey) throw new UsageError('set MEDIAJOBS_API_KEY to your API key');
    const client = new MediaJobs({
      apiKey,
      baseUrl,
      onRetry: ({ attempt, delayMs, error }) =>
        io.stderr.write(`retry ${attempt} in ${(delayMs / 1000).toFixed(1)} s after ${error.code}\n`),
    });
    switch (command) {
      case 'convert':
        return await convert(client, rest, io);
      case 'audio':
        return await audio(client, rest, io);
      case 'estimate':
        return await estimateCommand(client, rest, io);
      case 'jobs':
        return await jobs(client, rest, io);
      case 'credits':
        return await credits(client, rest, io);
      case 'ledger':
        return await ledger(client, rest, io);
      case 'keys':
        return await keys(client, rest, io);
      case 'webhooks':
        return await webhooks(client, rest, io);
      case 'listen':
        return await listen(client, rest, io, io.signal ?? new AbortController().signal);
      default:
        throw new UsageError(command === undefined ? 'missing a command' : `unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`usage_error: ${error.message}\n${commandHint(command) ?? USAGE_HINT}\n`);
      return EXIT_CODES.usage;
    }
    if (error instanceof MediaJobsError) {
      io.stderr.write(`${formatError(error)}\n`);
      return exitCodeFor(error);
    }
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_UNKNOWN;
  }
}
