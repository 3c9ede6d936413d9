#!/usr/bin/env node
// The `mediajobs` command: convert / audio / jobs / credits over the client. Results go to stdout,
// progress and errors to stderr, and the exit code tells the error family (EXIT_CODES).

import { createWriteStream, existsSync } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { parseArgs } from 'node:util';
import { MediaJobs } from './client.js';
import { MediaJobsError } from './errors.js';
import type { Api, JobInput, JobStatus, JobView } from './types.js';
import { VERSION } from './version.js';

export const EXIT_CODES = {
  usage: 2,
  auth_error: 3,
  billing_error: 4,
  rate_limit_error: 5,
  invalid_request_error: 6,
  resource_error: 7,
  processing_error: 8,
  server_error: 9,
  license_error: 10,
  connection_error: 11,
} as const;
/** Any other failure, including error families newer than this client. */
export const EXIT_UNKNOWN = 1;

const USAGE = `mediajobs ${VERSION}

Usage:
  mediajobs convert <file|url> --to out.mp4 [--resolution source|720p|1080p|2160p] [--peak-nits 1000] [--quality fast|balanced|best]
  mediajobs audio <file|url> --lufs -16 [--to out.wav]
  mediajobs jobs get <sdr2hdr|audio> <job_id>
  mediajobs jobs list <sdr2hdr|audio> [--limit 10] [--status failed] [--starting-after job_…]
  mediajobs jobs cancel <sdr2hdr|audio> <job_id>
  mediajobs credits

Environment: MEDIAJOBS_API_KEY (required), MEDIAJOBS_BASE_URL (required).
Exit codes: 2 usage, 3 auth, 4 billing, 5 rate limit, 6 invalid request, 7 resource,
8 processing, 9 server, 10 licence, 11 connection or timeout, 1 anything else.
`;

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
}

class UsageError extends Error {}

const CONTENT_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
};

export function formatError(error: MediaJobsError): string {
  return `${error.code}: ${error.message}${error.docUrl ? ` (${error.docUrl})` : ''}`;
}

export function exitCodeFor(error: MediaJobsError): number {
  return Object.prototype.hasOwnProperty.call(EXIT_CODES, error.type)
    ? EXIT_CODES[error.type as keyof typeof EXIT_CODES]
    : EXIT_UNKNOWN;
}

/** One progress line: bar, percentage and an ETA extrapolated from the time spent so far. */
export function renderProgress(progress: number, elapsedMs: number, width = 30): string {
  const fraction = Math.min(1, Math.max(0, progress));
  const filled = Math.round(fraction * width);
  // No ETA until there is both progress and elapsed time to extrapolate from.
  const eta =
    fraction > 0 && fraction < 1 && elapsedMs > 0 ? formatDuration((elapsedMs * (1 - fraction)) / fraction) : '--:--';
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ETA ${eta}`;
}

export function formatDuration(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

/** Follows a job on stderr: a redrawn bar on a terminal, plain lines (on change) in a log or pipe. */
function progressReporter(stderr: CliIo['stderr']): { update: (job: JobView) => void; finish: () => void } {
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

/** `--lufs -16` would be refused by parseArgs as an option-like value: join negative numbers to their flag. */
function joinNegativeNumbers(args: string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    const next = args[index + 1];
    if (arg.startsWith('--') && !arg.includes('=') && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else joined.push(arg);
  }
  return joined;
}

function parse<const T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], options: T) {
  try {
    return parseArgs({ args: joinNegativeNumbers(args), options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function apiArg(value: string | undefined): Api {
  if (value === 'sdr2hdr' || value === 'audio') return value;
  throw new UsageError(`expected an API name, sdr2hdr or audio, got ${value === undefined ? 'nothing' : `"${value}"`}`);
}

function numberArg(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) throw new UsageError(`--${name} must be a number, got "${value}"`);
  return number;
}

async function inputFor(client: MediaJobs, source: string | undefined, stderr: CliIo['stderr']): Promise<JobInput> {
  if (source === undefined) throw new UsageError('missing the input file or URL');
  if (/^https?:\/\//i.test(source)) return { source_url: source };
  if (!existsSync(source)) throw new UsageError(`no such file: ${source}`);
  const contentType = CONTENT_TYPES[extname(source).toLowerCase()] ?? 'application/octet-stream';
  stderr.write(`uploading ${source}\n`);
  const upload = await client.uploads.createFromFile(source, { contentType });
  return { upload_id: upload.upload_id };
}

async function runJob(client: MediaJobs, api: Api, submitted: JobView, to: string, io: CliIo): Promise<void> {
  io.stderr.write(`submitted ${submitted.job_id} (estimated ${submitted.billing.estimated_credits} credits)\n`);
  const progress = progressReporter(io.stderr);
  let job: JobView;
  try {
    job = await client.waitForJob(api, submitted.job_id, { onProgress: progress.update });
  } finally {
    progress.finish();
  }
  const output = job.items[0]?.output;
  if (!output) {
    const cause = job.items[0]?.error;
    throw new MediaJobsError({
      type: cause?.type ?? 'processing_error',
      code: cause?.code ?? 'processing_failed',
      message: cause?.message ?? `Job ${job.job_id} finished without an output.`,
      docUrl: cause?.doc_url,
      retryable: false,
    });
  }
  await download(client, output.url, to);
  io.stdout.write(`saved ${to} (job ${job.job_id}, ${job.status}, charged ${job.billing.charged_credits} credits)\n`);
}

/** Streams the result to `<to>.part`, then renames it, so an interrupted download leaves no half file at `to`. */
async function download(client: MediaJobs, url: string, to: string): Promise<void> {
  const response = await client.assets.download(url);
  const partial = `${to}.part`;
  try {
    if (!response.body) throw new Error('empty download body');
    await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), createWriteStream(partial));
    await rename(partial, to);
  } catch (error) {
    await unlink(partial).catch(() => undefined);
    throw error;
  }
}

async function convert(client: MediaJobs, args: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(args, {
    to: { type: 'string' },
    resolution: { type: 'string' },
    'peak-nits': { type: 'string' },
    quality: { type: 'string' },
  });
  if (!values.to) throw new UsageError('convert needs --to <output file>');
  const resolution = values.resolution;
  if (resolution !== undefined && !['source', '720p', '1080p', '2160p'].includes(resolution)) {
    throw new UsageError('--resolution must be source, 720p, 1080p or 2160p');
  }
  const quality = values.quality;
  if (quality !== undefined && !['fast', 'balanced', 'best'].includes(quality)) {
    throw new UsageError('--quality must be fast, balanced or best');
  }
  const input = await inputFor(client, positionals[0], io.stderr);
  const job = await client.sdr2hdr.jobs.create({
    inputs: [input],
    output: {
      resolution: resolution as 'source' | '720p' | '1080p' | '2160p' | undefined,
      peak_nits: numberArg('peak-nits', values['peak-nits']),
      container: extname(values.to).toLowerCase() === '.mov' ? 'mov' : 'mp4',
      quality: quality as 'fast' | 'balanced' | 'best' | undefined,
    },
  });
  await runJob(client, 'sdr2hdr', job, values.to, io);
}

async function audio(client: MediaJobs, args: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(args, { lufs: { type: 'string' }, to: { type: 'string' } });
  const source = positionals[0];
  const to = values.to ?? `${basename(source ?? 'output', extname(source ?? '')) || 'output'}.normalised.wav`;
  const input = await inputFor(client, source, io.stderr);
  const job = await client.audio.jobs.create({
    inputs: [input],
    output: {
      target_lufs: numberArg('lufs', values.lufs),
      container: extname(to).toLowerCase() === '.m4a' ? 'm4a' : 'wav',
    },
  });
  await runJob(client, 'audio', job, to, io);
}

async function jobs(client: MediaJobs, args: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(args, {
    limit: { type: 'string' },
    status: { type: 'string' },
    'starting-after': { type: 'string' },
  });
  const [action, apiName, jobId] = positionals;
  const resource = client[apiArg(apiName)].jobs;
  const needId = (): string => {
    if (!jobId) throw new UsageError(`jobs ${action} needs a job id`);
    return jobId;
  };
  let result: unknown;
  if (action === 'get') result = await resource.retrieve(needId());
  else if (action === 'cancel') result = await resource.cancel(needId());
  else if (action === 'list') {
    result = await resource.list({
      limit: numberArg('limit', values.limit),
      status: values.status as JobStatus | undefined,
      starting_after: values['starting-after'],
    });
  } else throw new UsageError('jobs needs get, list or cancel');
  io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

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
    const baseUrl = io.env.MEDIAJOBS_BASE_URL;
    if (!apiKey) throw new UsageError('set MEDIAJOBS_API_KEY to your API key');
    if (!baseUrl) throw new UsageError('set MEDIAJOBS_BASE_URL, for example https://api.example.com');
    const client = new MediaJobs({
      apiKey,
      baseUrl,
      onRetry: ({ attempt, delayMs, error }) =>
        io.stderr.write(`retry ${attempt} in ${(delayMs / 1000).toFixed(1)} s after ${error.code}\n`),
    });
    if (command === 'convert') await convert(client, rest, io);
    else if (command === 'audio') await audio(client, rest, io);
    else if (command === 'jobs') await jobs(client, rest, io);
    else if (command === 'credits') io.stdout.write(`${JSON.stringify(await client.account.credits(), null, 2)}\n`);
    else throw new UsageError(command === undefined ? 'missing a command' : `unknown command "${command}"`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`usage_error: ${error.message}\n\n${USAGE}`);
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

if (require.main === module) {
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`error: ${String(error)}\n`);
      process.exitCode = EXIT_UNKNOWN;
    },
  );
}
