#!/usr/bin/env node
// The `mediajobs` command: convert / audio / jobs / credits over the client. Results go to stdout,
// progress and errors to stderr, and the exit code tells the error family (EXIT_CODES).

import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { parseArgs } from 'node:util';
import { MediaJobs } from './client.js';
import { MediaJobsError, errorFromObject } from './errors.js';
import type { StreamedEvent } from './event-stream.js';
import { describeMedia, type DescribedMedia } from './media-info.js';
import { signWebhook } from './webhooks.js';
import type { PagePromise } from './api-promise.js';
import type { JobsResource } from './resources.js';
import {
  API_KEY_SCOPES,
  JOB_STATUSES,
  OUTPUT_OPTIONS,
  type Api,
  type ApiKeyScope,
  type AudioJobParams,
  type EstimateParams,
  type JobEstimate,
  type JobInput,
  type JobOutput,
  type JobView,
  type Sdr2HdrJobParams,
  type Sdr2HdrOutput,
} from './types.js';
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

/** Where `npm run dev` serves the API: the CLI's default when MEDIAJOBS_BASE_URL is not set. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

const { sdr2hdr: VIDEO, audio: AUDIO } = OUTPUT_OPTIONS;

const USAGE = `mediajobs ${VERSION}

Usage:
  mediajobs convert <file|url> --to out.mp4 [--resolution ${VIDEO.resolution.join('|')}] [--peak-nits ${VIDEO.defaults.peak_nits}] [--quality ${VIDEO.quality.join('|')}] [--force]
  mediajobs audio <file|url> --lufs ${AUDIO.defaults.target_lufs} [--to out.wav] [--force]
  mediajobs estimate <sdr2hdr|audio> <file|url> [--resolution …] [--quality …]
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

convert and audio show the price first (POST /v1/{api}/jobs/estimate) and stop before uploading when
the account cannot pay; they never overwrite an existing output unless --force is given.

Environment: MEDIAJOBS_API_KEY (required), MEDIAJOBS_BASE_URL (default ${DEFAULT_BASE_URL}).
Exit codes: 2 usage, 3 auth, 4 billing, 5 rate limit, 6 invalid request, 7 resource,
8 processing, 9 server, 10 licence, 11 connection or timeout, 1 anything else.
`;

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM: long-running commands (`listen`) stop cleanly. */
  signal?: AbortSignal;
}

class UsageError extends Error {}

/** The media type a file of each output container is uploaded as: a container the contract adds fails to compile here. */
const CONTENT_TYPES: Record<JobOutput['container'], string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
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

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Byte progress of an upload or a download on stderr: a redrawn line on a terminal; otherwise a line
 * at the start, at each quarter and at the end, so logs stay short.
 */
function byteProgress(stderr: CliIo['stderr'], verb: string, name: string, total: number | null) {
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

class LocalFile {
  constructor(
    readonly path: string,
    readonly size: number,
  ) {}
}

type Source = { kind: 'url'; input: JobInput } | { kind: 'file'; file: LocalFile };

async function sourceFor(source: string | undefined): Promise<Source> {
  if (source === undefined) throw new UsageError('missing the input file or URL');
  if (/^https?:\/\//i.test(source)) return { kind: 'url', input: { source_url: source } };
  if (!existsSync(source)) throw new UsageError(`no such file: ${source}`);
  return { kind: 'file', file: new LocalFile(source, (await stat(source)).size) };
}

async function upload(client: MediaJobs, file: LocalFile, io: CliIo): Promise<JobInput> {
  const extension = extname(file.path).toLowerCase().slice(1);
  const contentType = Object.hasOwn(CONTENT_TYPES, extension)
    ? CONTENT_TYPES[extension as JobOutput['container']]
    : 'application/octet-stream';
  const progress = byteProgress(io.stderr, 'uploading', file.path, file.size);
  progress.update(0);
  const uploaded = await client.uploads.createFromFile(file.path, { contentType, onProgress: progress.update });
  progress.finish(uploaded.size_bytes);
  return { upload_id: uploaded.upload_id };
}

/** The estimate, printed; returns false (after printing the refusal and its numbers) when the account cannot pay. */
function showEstimate(estimate: JobEstimate, io: CliIo): boolean {
  io.stderr.write(
    `estimate: ${estimate.estimated_credits} credits ($${estimate.estimated_usd.toFixed(2)} at $${estimate.usd_per_credit}/credit) ` +
      `for ${estimate.duration_seconds.toFixed(1)} s of media; about ${formatDuration(estimate.estimated_seconds * 1000)} of processing\n`,
  );
  if (estimate.accepted || !estimate.error) return true;
  const error = estimate.error;
  io.stderr.write(`${error.code}: ${error.message}${error.doc_url ? ` (${error.doc_url})` : ''}\n`);
  for (const [name, value] of Object.entries(error.details ?? {})) io.stderr.write(`  ${name}: ${String(value)}\n`);
  io.stderr.write('nothing was uploaded or submitted\n');
  return false;
}

/**
 * Price first, then upload, submit, follow, download. A local file is priced from its headers
 * (duration, picture size) before any byte is sent; a file the headers do not describe is uploaded
 * first and priced by its upload. The account's refusal stops the run before the submit either way.
 */
async function priceUploadAndRun<Params extends { inputs: JobInput[] }>(
  client: MediaJobs,
  api: Api,
  source: Source,
  params: Omit<Params, 'inputs'>,
  to: string,
  io: CliIo,
  started: number,
): Promise<number> {
  const jobs = client[api].jobs as unknown as JobsResource<Params>;
  let input: JobInput | null = source.kind === 'url' ? source.input : null;
  const described = source.kind === 'file' ? await describeMedia(source.file.path) : null;
  if (!input && !described && source.kind === 'file') input = await upload(client, source.file, io);
  const estimateInput = input ?? { media: described! };
  const estimate = await jobs.estimate({ ...params, inputs: [estimateInput] } as EstimateParams<Params>);
  if (!showEstimate(estimate, io))
    return estimate.error ? exitCodeFor(errorFromObject(estimate.error, { status: null })) : EXIT_UNKNOWN;
  if (!input && source.kind === 'file') input = await upload(client, source.file, io);
  const submitted = await jobs.create({ ...params, inputs: [input!] } as Params);
  await runJob(client, api, submitted, to, io, started);
  return 0;
}

async function runJob(
  client: MediaJobs,
  api: Api,
  submitted: JobView,
  to: string,
  io: CliIo,
  started: number,
): Promise<void> {
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
  await download(client, output.url, to, io);
  io.stdout.write(
    `saved ${to} (job ${job.job_id}, ${job.status}, charged ${job.billing.charged_credits} credits) in ${formatDuration(Date.now() - started)}\n`,
  );
}

/** Streams the result to `<to>.part`, then renames it, so an interrupted download leaves no half file at `to`. */
async function download(client: MediaJobs, url: string, to: string, io: CliIo): Promise<void> {
  const response = await client.assets.download(url);
  const partial = `${to}.part`;
  const length = Number(response.headers.get('content-length'));
  const progress = byteProgress(io.stderr, 'downloading', to, Number.isFinite(length) && length > 0 ? length : null);
  let received = 0;
  try {
    if (!response.body) throw new Error('empty download body');
    progress.update(0);
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        progress.update(received);
        done(null, chunk);
      },
    });
    await pipeline(
      Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>),
      counter,
      createWriteStream(partial),
    );
    progress.finish(received);
    await rename(partial, to);
  } catch (error) {
    await unlink(partial).catch((cleanup: unknown) => {
      // The download already failed; a leftover .part file is only untidy.
      io.stderr.write(`could not remove ${partial}: ${String(cleanup)}\n`);
    });
    throw error;
  }
}

function refuseOverwrite(to: string, force: boolean | undefined): void {
  if (!force && existsSync(to)) throw new UsageError(`${to} exists; pass --force to overwrite it`);
}

/** `value` if it is one of `choices` (undefined when not given); a usage error naming the choices otherwise. */
function choiceArg<T extends string>(name: string, value: string | undefined, choices: readonly T[]): T | undefined {
  if (value === undefined || (choices as readonly string[]).includes(value)) return value as T | undefined;
  throw new UsageError(`--${name} must be ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`);
}

function sdr2hdrOutput(
  values: { resolution?: string; 'peak-nits'?: string; quality?: string },
  to: string | undefined,
): Sdr2HdrOutput {
  return {
    resolution: choiceArg('resolution', values.resolution, VIDEO.resolution),
    peak_nits: numberArg('peak-nits', values['peak-nits']),
    container: to && extname(to).toLowerCase() === '.mov' ? 'mov' : 'mp4',
    quality: choiceArg('quality', values.quality, VIDEO.quality),
  };
}

async function convert(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const started = Date.now();
  const { values, positionals } = parse(args, {
    to: { type: 'string' },
    resolution: { type: 'string' },
    'peak-nits': { type: 'string' },
    quality: { type: 'string' },
    force: { type: 'boolean' },
  });
  if (!values.to) throw new UsageError('convert needs --to <output file>');
  const output = sdr2hdrOutput(values, values.to);
  refuseOverwrite(values.to, values.force);
  const source = await sourceFor(positionals[0]);
  return priceUploadAndRun<Sdr2HdrJobParams>(client, 'sdr2hdr', source, { output }, values.to, io, started);
}

async function audio(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const started = Date.now();
  const { values, positionals } = parse(args, {
    lufs: { type: 'string' },
    to: { type: 'string' },
    force: { type: 'boolean' },
  });
  const name = positionals[0];
  const to = values.to ?? `${basename(name ?? 'output', extname(name ?? '')) || 'output'}.normalised.wav`;
  refuseOverwrite(to, values.force);
  const source = await sourceFor(name);
  const output = {
    target_lufs: numberArg('lufs', values.lufs),
    container: (extname(to).toLowerCase() === '.m4a' ? 'm4a' : 'wav') as 'm4a' | 'wav',
  };
  return priceUploadAndRun<AudioJobParams>(client, 'audio', source, { output }, to, io, started);
}

/** `estimate <api> <file|url>`: the estimate as JSON, nothing uploaded for a file its headers describe. */
async function estimateCommand(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    resolution: { type: 'string' },
    'peak-nits': { type: 'string' },
    quality: { type: 'string' },
    lufs: { type: 'string' },
  });
  const api = apiArg(positionals[0]);
  const source = await sourceFor(positionals[1]);
  let input: JobInput | { media: DescribedMedia };
  if (source.kind === 'url') input = source.input;
  else {
    const described = await describeMedia(source.file.path);
    input = described ? { media: described } : await upload(client, source.file, io);
  }
  const estimate =
    api === 'sdr2hdr'
      ? await client.sdr2hdr.jobs.estimate({ inputs: [input], output: sdr2hdrOutput(values, undefined) })
      : await client.audio.jobs.estimate({ inputs: [input], output: { target_lufs: numberArg('lufs', values.lufs) } });
  io.stdout.write(`${JSON.stringify(estimate, null, 2)}\n`);
  return 0;
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
      status: choiceArg('status', values.status, JOB_STATUSES),
      starting_after: values['starting-after'],
    });
  } else throw new UsageError('jobs needs get, list or cancel');
  io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

const printJson = (io: CliIo, value: unknown): void => {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

/** A list command: the first page as the API gives it, or with --all every item of every page. */
async function printList<T>(io: CliIo, list: PagePromise<T>, all: boolean | undefined): Promise<void> {
  printJson(io, all ? await list.toArray() : await list);
}

async function keys(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    scopes: { type: 'string' },
    'expires-at': { type: 'string' },
    limit: { type: 'string' },
    all: { type: 'boolean' },
  });
  const [action, keyId] = positionals;
  if (action === 'list')
    await printList(io, client.apiKeys.list({ limit: numberArg('limit', values.limit) }), values.all);
  else if (action === 'create') {
    const scopes = (values.scopes ?? '').split(',').filter(Boolean);
    const unknown = scopes.filter((scope) => !API_KEY_SCOPES.includes(scope as ApiKeyScope));
    if (scopes.length === 0 || unknown.length > 0) {
      throw new UsageError(`--scopes takes a comma-separated list of ${API_KEY_SCOPES.join(', ')}`);
    }
    const created = await client.apiKeys.create({
      scopes: scopes as ApiKeyScope[],
      ...(values['expires-at'] ? { expires_at: values['expires-at'] } : {}),
    });
    printJson(io, created);
    io.stderr.write('the key is shown once: store it now\n');
  } else if (action === 'revoke') {
    if (!keyId) throw new UsageError('keys revoke needs a key id (key_…)');
    printJson(io, await client.apiKeys.revoke(keyId));
  } else throw new UsageError('keys needs list, create or revoke');
  return 0;
}

async function ledger(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { limit: { type: 'string' }, all: { type: 'boolean' } });
  await printList(io, client.account.ledger({ limit: numberArg('limit', values.limit) }), values.all);
  return 0;
}

async function webhooks(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { limit: { type: 'string' }, all: { type: 'boolean' } });
  const [action, endpointId] = positionals;
  const limit = numberArg('limit', values.limit);
  if (action === 'list') await printList(io, client.webhookEndpoints.list({ limit }), values.all);
  else if (action === 'deliveries') {
    if (!endpointId) throw new UsageError('webhooks deliveries needs an endpoint id (we_…)');
    await printList(io, client.webhookEndpoints.deliveries(endpointId, { limit }), values.all);
  } else throw new UsageError('webhooks needs list or deliveries');
  return 0;
}

/**
 * `listen`: the account's events from GET /v1/events/stream, each POSTed to a local URL exactly as a
 * webhook delivery would be (same body, Standard Webhooks headers signed with `--secret`, or with a
 * secret made for this session and printed), so a receiver can be built without a public address.
 * Runs until interrupted (SIGINT/SIGTERM → exit 0).
 */
async function listen(client: MediaJobs, args: string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const { values } = parse(args, {
    'forward-to': { type: 'string' },
    secret: { type: 'string' },
    events: { type: 'string' },
  });
  const target = values['forward-to'];
  if (!target || !/^https?:\/\//i.test(target))
    throw new UsageError('listen needs --forward-to http://localhost:PORT/path');
  const secret = values.secret ?? io.env.MEDIAJOBS_WEBHOOK_SECRET ?? `whsec_${randomBytes(24).toString('base64')}`;
  if (!secret.startsWith('whsec_')) throw new UsageError('--secret must be a webhook secret (whsec_…)');
  const wanted = values.events ? new Set(values.events.split(',').filter(Boolean)) : null;
  let ready = false;
  const stream = client.events.stream({
    signal,
    onConnect: () => {
      if (ready) {
        io.stderr.write('reconnected\n');
        return;
      }
      ready = true;
      io.stderr.write(
        `Ready. Forwarding this account's events to ${target}\n` +
          `Signing secret for this session: ${secret}\n` +
          '(verify with it as with an endpoint secret; Ctrl-C to stop)\n',
      );
    },
    onReconnect: ({ delayMs, error }) =>
      io.stderr.write(
        `connection lost (${error instanceof Error ? error.message : String(error)}); reconnecting in ${(delayMs / 1000).toFixed(1)} s\n`,
      ),
  });
  try {
    for await (const event of stream) {
      if (wanted && !wanted.has(event.event)) continue;
      await forward(event, target, secret, io);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  return 0;
}

async function forward(event: StreamedEvent, target: string, secret: string, io: CliIo): Promise<void> {
  const timestamp = Math.floor(Date.now() / 1000);
  const started = Date.now();
  let outcome: string;
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `mediajobs-cli-listen/${VERSION}`,
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, event.id, timestamp, event.data),
      },
      body: event.data,
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    outcome = `[${response.status}]`;
  } catch (error) {
    // The local server is down or slow: say so and go on with the next event, as a delivery would fail.
    outcome = `[failed: ${error instanceof Error ? error.message : String(error)}]`;
  }
  io.stdout.write(
    `${new Date().toISOString()} ${event.event} ${event.id} → POST ${target} ${outcome} ${Date.now() - started} ms\n`,
  );
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
        await jobs(client, rest, io);
        return 0;
      case 'credits':
        printJson(io, await client.account.credits());
        return 0;
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
