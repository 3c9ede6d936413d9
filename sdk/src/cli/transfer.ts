// The commands that move media: convert (SDR→HDR10), audio (loudness) and estimate. Each prices the
// job first, then uploads, submits, follows and downloads.
import { createWriteStream, existsSync, readdirSync, statSync } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { MediaJobs } from '../client.js';
import { MediaJobsError, errorFromObject } from '../errors.js';
import { describeMedia, type DescribedMedia } from '../media-info.js';
import type { JobsResource } from '../resources.js';
import {
  OUTPUT_OPTIONS,
  type Api,
  type AudioJobParams,
  type EstimateParams,
  type JobEstimate,
  type JobInput,
  type JobOutput,
  type JobView,
  type Sdr2HdrJobParams,
  type Sdr2HdrOutput,
} from '../types.js';
import { apiArg, choiceArg, numberArg, parse, UsageError } from './args.js';
import { EXIT_UNKNOWN, exitCodeFor } from './exit-codes.js';
import { formatBytes, formatDuration, plural } from './format.js';
import { downloadPackage } from './package-download.js';
import type { CliIo } from './io.js';
import { byteProgress, progressReporter } from './progress.js';

const PROGRESS_POLL_MS = 1000;

const VIDEO = OUTPUT_OPTIONS.sdr2hdr;
/** `--package`: `file` (one MP4 or MOV, the default) or `hls` (a streaming package saved into a folder). */
const PACKAGES = ['file', 'hls'] as const;

/**
 * The media type a file of each output container is uploaded as: a container the contract adds fails to compile
 * here. An HLS package (`hls`) is a folder of files, never one upload.
 */
type FileContainer = Exclude<JobOutput['container'], 'hls'>;
const CONTENT_TYPES: Record<FileContainer, string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
};

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
    ? CONTENT_TYPES[extension as FileContainer]
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
    `estimate: ${plural(estimate.estimated_credits, 'credit')} ($${estimate.estimated_usd.toFixed(2)} at $${estimate.usd_per_credit}/credit) ` +
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
  // The API would answer `missing_parameter: … media.width`; the person ran the wrong command.
  if (api === 'sdr2hdr' && described && described.width === undefined && source.kind === 'file')
    throw new UsageError(`${basename(source.file.path)} has no video stream; for audio use \`mediajobs audio\``);
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
  io.stderr.write(
    `submitted ${submitted.job_id} (estimated ${plural(submitted.billing.estimated_credits, 'credit')})\n`,
  );
  const progress = progressReporter(io.stderr);
  let job: JobView;
  try {
    // Polled every second, so the bar and the phase follow the job closely (a wait backs off to 10 s).
    job = await client.waitForJob(api, submitted.job_id, {
      onProgress: progress.update,
      pollIntervalMs: PROGRESS_POLL_MS,
      maxPollIntervalMs: PROGRESS_POLL_MS,
    });
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
  if (output.playlist_url) {
    const saved = await downloadPackage(client, output.playlist_url, to, (path, bytes) =>
      io.stderr.write(`saved ${path} (${formatBytes(bytes)})\n`),
    );
    io.stderr.write(`${plural(saved.files, 'file')} of the package, ${formatBytes(saved.bytes)}\n`);
  } else {
    await download(client, output.url, to, io);
  }
  io.stdout.write(
    `saved ${to} (job ${job.job_id}, ${job.status}, charged ${plural(job.billing.charged_credits, 'credit')}) in ${formatDuration(Date.now() - started)}\n`,
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

/** A package goes into a folder: a new or empty one, or any with --force (its package files are replaced). */
function refuseFullFolder(to: string, force: boolean | undefined): void {
  if (force || !existsSync(to)) return;
  if (!statSync(to).isDirectory()) throw new UsageError(`${to} is a file; --package hls saves into a folder`);
  if (readdirSync(to).length > 0) throw new UsageError(`${to} is not empty; pass --force to write into it`);
}

function sdr2hdrOutput(
  values: { resolution?: string; 'peak-nits'?: string; quality?: string; mapping?: string; transfer?: string },
  to: string | undefined,
): Sdr2HdrOutput {
  return {
    resolution: choiceArg('resolution', values.resolution, VIDEO.resolution),
    peak_nits: numberArg('peak-nits', values['peak-nits']),
    container: to && extname(to).toLowerCase() === '.mov' ? 'mov' : 'mp4',
    quality: choiceArg('quality', values.quality, VIDEO.quality),
    mapping: choiceArg('mapping', values.mapping, VIDEO.mapping),
    transfer: choiceArg('transfer', values.transfer, VIDEO.transfer),
  };
}

export async function convert(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const started = Date.now();
  const { values, positionals } = parse(args, {
    to: { type: 'string' },
    resolution: { type: 'string' },
    'peak-nits': { type: 'string' },
    quality: { type: 'string' },
    mapping: { type: 'string' },
    transfer: { type: 'string' },
    package: { type: 'string' },
    force: { type: 'boolean' },
  });
  const packaged = choiceArg('package', values.package, PACKAGES) === 'hls';
  if (!values.to) throw new UsageError(`convert needs --to <${packaged ? 'output folder' : 'output file'}>`);
  let output: Sdr2HdrOutput = sdr2hdrOutput(values, values.to);
  if (packaged) {
    // A package's pictures are its ladder and its segments CMAF: resolution and container describe a file.
    if (values.resolution) throw new UsageError('--resolution applies to a file, not to --package hls');
    const { container: _file, ...rest } = output;
    output = { ...rest, package: 'hls' } as Sdr2HdrOutput;
    refuseFullFolder(values.to, values.force);
  } else {
    refuseOverwrite(values.to, values.force);
  }
  const source = await sourceFor(positionals[0]);
  return priceUploadAndRun<Sdr2HdrJobParams>(client, 'sdr2hdr', source, { output }, values.to, io, started);
}

export async function audio(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
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
export async function estimateCommand(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    resolution: { type: 'string' },
    'peak-nits': { type: 'string' },
    quality: { type: 'string' },
    mapping: { type: 'string' },
    transfer: { type: 'string' },
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
