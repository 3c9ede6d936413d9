// The `mediajobs` command: reads the command, builds the client, runs one command, and turns every
// failure into one stderr line and an exit code that tells its family (exit-codes.ts).
import { MediaJobs } from '../client.js';
import { MediaJobsError } from '../errors.js';
import { API_KEY_SCOPES, OUTPUT_OPTIONS } from '../types.js';
import { VERSION } from '../version.js';
import { credits, keys, ledger } from './account.js';
import { UsageError } from './args.js';
import { EXIT_CODES, EXIT_UNKNOWN, exitCodeFor, formatError } from './exit-codes.js';
import type { CliIo } from './io.js';
import { jobs } from './jobs.js';
import { listen } from './listen.js';
import { audio, convert, estimateCommand } from './transfer.js';
import { webhooks } from './webhooks.js';

/** Where `npm run dev` serves the API: the CLI's default when MEDIAJOBS_BASE_URL is not set. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

/** What a usage error adds to its one line. */
export const USAGE_HINT = "Run 'mediajobs --help' for the commands and their options.";

const { sdr2hdr: VIDEO, audio: AUDIO } = OUTPUT_OPTIONS;

export const USAGE = `mediajobs ${VERSION}

Usage:
  mediajobs convert <file|url> --to out.mp4 [--resolution ${VIDEO.resolution.join('|')}] [--peak-nits ${VIDEO.defaults.peak_nits}] [--quality ${VIDEO.quality.join('|')}]
                   [--mapping ${VIDEO.mapping.join('|')}] [--transfer ${VIDEO.transfer.join('|')}] [--force]
  mediajobs audio <file|url> --lufs ${AUDIO.defaults.target_lufs} [--to out.wav] [--force]
  mediajobs estimate <sdr2hdr|audio> <file|url> [--resolution …] [--quality …] [--mapping …] [--transfer …]
  mediajobs jobs get <sdr2hdr|audio> <job_id>
  mediajobs jobs list <sdr2hdr|audio> [--limit 10] [--status failed] [--starting-after job_…]
  mediajobs jobs cancel <sdr2hdr|audio> <job_id>
  mediajobs credits
  mediajobs ledger [--limit 20] [--all]
  mediajobs keys list [--all]
  mediajobs keys create --scopes ${API_KEY_SCOPES.join(',')} [--expires-at 2026-12-31T00:00:00Z]
  mediajobs keys revoke <key_id>
  mediajobs webhooks list
  mediajobs webhooks deliveries <we_id> [--limit 20]
  mediajobs listen --forward-to http://localhost:4242/webhooks [--secret whsec_…] [--events job.failed,job.succeeded]

On a terminal, credits, ledger, jobs, keys and webhooks print tables; with --json, or when the output
is piped, they print the API's JSON.

convert and audio show the price first (POST /v1/{api}/jobs/estimate) and stop before uploading when
the account cannot pay; they never overwrite an existing output unless --force is given.

Environment: MEDIAJOBS_API_KEY (required), MEDIAJOBS_BASE_URL (default ${DEFAULT_BASE_URL}).
Exit codes: 2 usage, 3 auth, 4 billing, 5 rate limit, 6 invalid request, 7 resource,
8 processing, 9 server, 10 licence, 11 connection or timeout, 1 anything else.
`;

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    io.stdout.write(USAGE);
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
      io.stderr.write(`usage_error: ${error.message}\n${USAGE_HINT}\n`);
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
