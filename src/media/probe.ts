// Runs ffprobe on a source and judges it: either a ProbeResult the pipelines can use, or the catalogue
// code a customer should see (unsupported_format, unsupported_codec, invalid_media, drm_protected, …).
import { runMediaProcess, defaultFfprobePath } from './run-ffmpeg';
import { isNetworkInput } from './ffmpeg-input';
import { buildProbeArgs } from './probe-args';
import { scanIsoBmff } from './iso-bmff';
import { measurePacketEnds, type PacketEnds } from './packet-end';
import { pixelBudgetProblem } from './pixel-budget';
import type {
  AudioStreamInfo,
  InputContainer,
  MediaApi,
  ProbeOutcome,
  ProbeResult,
  VideoStreamInfo,
} from './media.types';

export const ACCEPTED_VIDEO_CODECS: ReadonlySet<string> = new Set(['h264', 'hevc', 'prores', 'mpeg2video']);
export const ACCEPTED_AUDIO_CODECS: ReadonlySet<string> = new Set(['aac', 'mp3', 'alac', 'flac']);
const DEFAULT_PROBE_TIMEOUT_MS = 15_000;
// ffprobe's JSON for a normal file is a few KiB; a stream listing bigger than this is hostile.
const MAX_PROBE_STDOUT_BYTES = 8 * 1024 * 1024;

/** The part of ffprobe's JSON we read (`-show_format -show_streams -show_packets`). */
export interface FfprobeOutput {
  format?: {
    format_name?: string;
    duration?: string;
    tags?: Record<string, string>;
  };
  streams?: FfprobeStream[];
  packets?: Array<{ stream_index?: number; side_data_list?: Array<{ side_data_type?: string }> }>;
}

export interface FfprobeStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  codec_tag_string?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  pix_fmt?: string;
  color_range?: string;
  color_space?: string;
  color_transfer?: string;
  color_primaries?: string;
  sample_rate?: string;
  channels?: number;
  duration?: string;
  start_time?: string;
  disposition?: { attached_pic?: number };
}

export interface ProbeRules {
  /** Which API the source is for: decides the stream that must exist and the codecs checked. */
  api: MediaApi;
  maxDurationSeconds?: number;
  /** Worker budget (WORKER_MAX_PIXELS): a larger video frame is out_of_memory. Video APIs only. */
  maxPixels?: number;
  /**
   * Let CENC/DRM input through with `encrypted: true` instead of answering drm_protected (submit does
   * this: the job is accepted and then fails in the worker as drm_protected, refunded).
   */
  allowEncrypted?: boolean;
}

export interface ProbeOptions extends ProbeRules {
  ffprobePath?: string;
  timeoutMs?: number;
  /** Network read timeout for URL inputs, in µs (ffprobe's -rw_timeout). */
  rwTimeoutUs?: number;
  signal?: AbortSignal;
}

/** Probes a local absolute path or an http(s) URL and classifies it for `options.api`. */
export async function probeMedia(input: string, options: ProbeOptions): Promise<ProbeOutcome> {
  const network = isNetworkInput(input);
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const chunks: Buffer[] = [];
  let stdoutBytes = 0;
  const started = performance.now();
  const run = await runMediaProcess(
    options.ffprobePath ?? defaultFfprobePath(),
    buildProbeArgs(input, options.rwTimeoutUs),
    {
      signal: options.signal,
      timeLimitMs: timeoutMs,
      onStdout: (chunk) => {
        stdoutBytes += chunk.length;
        if (stdoutBytes > MAX_PROBE_STDOUT_BYTES) throw new Error('ffprobe output too large');
        chunks.push(chunk);
      },
    },
  );
  if (run.status === 'timeout') {
    return network
      ? {
          ok: false,
          code: 'invalid_url',
          message: `The source could not be read within ${Math.round(timeoutMs / 1000)} s.`,
        }
      : { ok: false, code: 'timeout', message: 'Reading the media took too long. Retry later.' };
  }
  if (run.status === 'aborted') throw new Error('probe aborted');
  if (run.status !== 'succeeded') return failedProbe(run.stderrTail, network);

  const raw = parseProbeJson(Buffer.concat(chunks).toString('utf8'));
  if (!raw) return invalidMedia('The media could not be read.');
  const encryptionSignals = network ? [] : await boxEncryptionSignals(input);
  // Then, within what is left of the time, where the packets end (packet-end.ts), so the length we
  // price is the one ffmpeg will encode, whatever the headers claim. One ffprobe at a time: the
  // submit's probe slots bound processes. Unknown (out of time): the header stands at submit; the
  // worker measures its local copy again, and its encode stops at the priced length.
  // Only the ISO BMFF family needs it: ffmpeg's WAV demuxer stops where the data chunk's declared size
  // ends, so a WAV decodes no longer than its header says.
  const isoBmff = (raw.format?.format_name ?? '').split(',').includes('mov');
  const packetEnds = isoBmff
    ? await measurePacketEnds(input, {
        ffprobePath: options.ffprobePath,
        timeoutMs: Math.max(1, timeoutMs - (performance.now() - started)),
        rwTimeoutUs: options.rwTimeoutUs,
        signal: options.signal,
      })
    : null;
  return classifyProbe(raw, { ...options, encryptionSignals, packetEnds });
}

export interface ClassifyOptions extends ProbeRules {
  /** Box-level evidence from a local file scan (iso-bmff.ts), e.g. ['encv', 'pssh']. */
  encryptionSignals?: string[];
  /** Where each stream's packets end (packet-end.ts); null or absent: the headers are all we know. */
  packetEnds?: PacketEnds | null;
}

/**
 * Pure verdict on ffprobe's JSON. Order: container, encryption, the stream the API needs, codecs,
 * decodability (sizes, duration), then limits (duration, pixels). Each step's failure is the
 * customer's most useful answer: re-wrapping fixes the first, nothing fixes the second, and so on.
 */
export function classifyProbe(raw: FfprobeOutput, options: ClassifyOptions): ProbeOutcome {
  const format = raw.format;
  const streams = raw.streams ?? [];
  if (!format?.format_name || streams.length === 0)
    return invalidMedia('The file has no readable audio or video stream.');

  const container = containerOf(format.format_name, format.tags);
  if (!container) {
    return unsupportedFormat(
      `The container (${describeFormat(format.format_name, format.tags)}) is not supported. Send MP4, MOV, M4A or WAV.`,
    );
  }

  const encrypted = hasEncryptedPackets(raw) || (options.encryptionSignals ?? []).length > 0;
  if (encrypted && !options.allowEncrypted) {
    return { ok: false, code: 'drm_protected', message: 'The input is encrypted (DRM/CENC) and cannot be processed.' };
  }

  const videoStream = streams.find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);
  const audioStream = streams.find((s) => s.codec_type === 'audio');
  const needed = requiredStream(options.api, videoStream, audioStream);
  if (needed) return needed;

  const codecProblem = codecCheck(options.api, videoStream, audioStream);
  if (codecProblem) return codecProblem;

  const video = videoStream && options.api === 'sdr2hdr' ? videoInfo(videoStream) : undefined;
  if (video && (video.width <= 0 || video.height <= 0)) return invalidMedia('The video stream has no picture size.');
  const audio = audioStream ? audioInfo(audioStream) : undefined;
  if (audio && (audio.sampleRate <= 0 || audio.channels <= 0))
    return invalidMedia('The audio stream has no sample rate or channels.');

  const durationSeconds = encodedDuration(
    durationOf(format.duration, options.api === 'sdr2hdr' ? videoStream : audioStream),
    // What the pipeline encodes: sdr2hdr keeps the audio beside the video (no -shortest); audio only the audio.
    options.api === 'sdr2hdr' ? [videoStream, audioStream] : [audioStream],
    options.packetEnds,
  );
  if (durationSeconds === null) return invalidMedia('The media has no duration (empty or unreadable).');

  if (options.maxDurationSeconds !== undefined && durationSeconds > options.maxDurationSeconds) {
    return {
      ok: false,
      code: 'duration_exceeded',
      message: `The input lasts ${Math.ceil(durationSeconds)} s; this API accepts at most ${options.maxDurationSeconds} s.`,
    };
  }
  const overBudget =
    video && options.maxPixels !== undefined ? pixelBudgetProblem(video.width, video.height, options.maxPixels) : null;
  if (overBudget) return { ok: false, code: overBudget.code, message: overBudget.message };

  const probe: ProbeResult = { container, formatName: format.format_name, durationSeconds, encrypted };
  if (video) probe.video = video;
  if (audio) probe.audio = audio;
  return { ok: true, probe };
}

// --- container -------------------------------------------------------------------------------------

// ISO-BMFF major brands per container. The mov demuxer reports one format_name ("mov,mp4,m4a,3gp,3g2,mj2")
// for all of them, so the file's own ftyp brand is what tells MP4 from MOV from M4A from 3GP.
const MP4_BRANDS = new Set([
  'isom',
  'iso2',
  'iso3',
  'iso4',
  'iso5',
  'iso6',
  'mp41',
  'mp42',
  'mp71',
  'avc1',
  'hvc1',
  'M4V ',
  'M4VH',
  'M4VP',
  'MSNV',
  'XAVC',
  'dash',
  'NDAS',
  'f4v ',
]);
const M4A_BRANDS = new Set(['M4A ', 'M4B ']);
const MOV_BRANDS = new Set(['qt  ']);

/** Our container for ffprobe's format, or null when it is not one we accept. */
export function containerOf(formatName: string, tags: Record<string, string> = {}): InputContainer | null {
  if (formatName === 'wav') return 'wav';
  if (!formatName.split(',').includes('mov')) return null;
  const major = tags.major_brand;
  // QuickTime files that predate ftyp have no brand at all.
  if (major === undefined) return 'mov';
  if (MOV_BRANDS.has(major)) return 'mov';
  if (M4A_BRANDS.has(major)) return 'm4a';
  if (MP4_BRANDS.has(major)) return 'mp4';
  // An unfamiliar major brand that declares plain ISO/MP4 compatibility is still an MP4 (e.g. a camera's own
  // brand); 3GP, Motion JPEG 2000, HEIF images and the like are not.
  const compatible = tags.compatible_brands ?? '';
  const unsupportedFamily = /^(3g|mj2|mjp2|heic|heix|mif1|msf1|avif|crx|jp2)/i.test(major);
  return !unsupportedFamily && /isom|mp41|mp42/.test(compatible) ? 'mp4' : null;
}

function describeFormat(formatName: string, tags: Record<string, string> = {}): string {
  return tags.major_brand ? `${formatName}, brand ${tags.major_brand.trim()}` : formatName;
}

// --- streams and codecs -----------------------------------------------------------------------------

function requiredStream(api: MediaApi, video?: FfprobeStream, audio?: FfprobeStream): ProbeOutcome | null {
  if (!video && !audio) return invalidMedia('The file has no readable audio or video stream.');
  // A file without the kind of stream the API works on is the wrong kind of file for it, not a broken
  // one: unsupported_format (415), with a message that says what is missing.
  if (api === 'sdr2hdr' && !video) return unsupportedFormat('sdr2hdr needs a video stream; this input has none.');
  if (api === 'audio' && !audio) return unsupportedFormat('The audio API needs an audio stream; this input has none.');
  return null;
}

function codecCheck(api: MediaApi, video?: FfprobeStream, audio?: FfprobeStream): ProbeOutcome | null {
  // Only streams the pipeline uses are judged: the audio API ignores a video track entirely.
  if (api === 'sdr2hdr' && video && !ACCEPTED_VIDEO_CODECS.has(video.codec_name ?? '')) {
    return unsupportedCodec('video', video, 'H.264, HEVC, ProRes or MPEG-2');
  }
  if (audio && !isAcceptedAudioCodec(audio.codec_name)) {
    return unsupportedCodec('audio', audio, 'AAC, PCM, MP3, ALAC or FLAC');
  }
  return null;
}

export function isAcceptedAudioCodec(codec: string | undefined): boolean {
  return codec !== undefined && (ACCEPTED_AUDIO_CODECS.has(codec) || codec.startsWith('pcm_'));
}

function unsupportedCodec(kind: 'video' | 'audio', stream: FfprobeStream, accepted: string): ProbeOutcome {
  const name = stream.codec_name ?? `unknown (${stream.codec_tag_string ?? 'no tag'})`;
  return {
    ok: false,
    code: 'unsupported_codec',
    message: `The ${kind} codec ${name} is not accepted. Use ${accepted}.`,
  };
}

function videoInfo(stream: FfprobeStream): VideoStreamInfo {
  return {
    index: stream.index,
    codec: stream.codec_name ?? '',
    width: stream.width ?? 0,
    height: stream.height ?? 0,
    fps: rate(stream.avg_frame_rate) ?? rate(stream.r_frame_rate),
    colorPrimaries: tag(stream.color_primaries),
    colorTransfer: tag(stream.color_transfer),
    colorSpace: tag(stream.color_space),
    colorRange: tag(stream.color_range),
    pixFmt: stream.pix_fmt ?? null,
  };
}

function audioInfo(stream: FfprobeStream): AudioStreamInfo {
  return {
    index: stream.index,
    codec: stream.codec_name ?? '',
    sampleRate: Number(stream.sample_rate ?? 0) || 0,
    channels: stream.channels ?? 0,
  };
}

/** ffprobe says "unknown" (or omits the key) for untagged colour; "unspecified" also means untagged. */
function tag(value: string | undefined): string | null {
  return value === undefined || value === 'unknown' || value === 'unspecified' || value === 'reserved' ? null : value;
}

function rate(value: string | undefined): number | null {
  const match = /^(\d+)\/(\d+)$/.exec(value ?? '');
  if (!match || Number(match[2]) === 0 || Number(match[1]) === 0) return null;
  return Math.round((Number(match[1]) / Number(match[2])) * 1000) / 1000;
}

function durationOf(formatDuration: string | undefined, stream?: FfprobeStream): number | null {
  for (const candidate of [formatDuration, stream?.duration]) {
    const value = Number(candidate);
    if (candidate !== undefined && Number.isFinite(value) && value > 0) return value;
  }
  return null;
}

/**
 * The length ffmpeg will encode. The header is believed when it covers every packet but the last (an
 * AAC frame trimmed by the edit list ends a few ms past an honest header; a 1-credit-per-second price
 * must not round that up); a header that stops earlier lies, and the packets' end is the length.
 */
function encodedDuration(
  header: number | null,
  streams: Array<FfprobeStream | undefined>,
  packetEnds: PacketEnds | null | undefined,
): number | null {
  let measured: number | null = null;
  let lastPacket = 0;
  for (const stream of streams) {
    const end = stream && packetEnds?.get(stream.index);
    if (!stream || !end) continue;
    const start = Math.max(0, Number(stream.start_time) || 0);
    const length = end.endSeconds - start;
    if (measured === null || length > measured) [measured, lastPacket] = [length, end.lastPacketSeconds];
  }
  if (measured === null || measured <= 0) return header;
  if (header !== null && measured - lastPacket <= header) return header;
  return Math.round(measured * 1e6) / 1e6;
}

// --- encryption -------------------------------------------------------------------------------------

function hasEncryptedPackets(raw: FfprobeOutput): boolean {
  return (raw.packets ?? []).some((packet) =>
    (packet.side_data_list ?? []).some((side) => side.side_data_type === 'Encryption info'),
  );
}

async function boxEncryptionSignals(path: string): Promise<string[]> {
  const scan = await scanIsoBmff(path);
  return scan?.encryptionSignals ?? [];
}

// --- failures ----------------------------------------------------------------------------------------

/** ffprobe exited non-zero: a demuxer we do not run, a network failure, or media it cannot parse. */
function failedProbe(stderrTail: string[], network: boolean): ProbeOutcome {
  const notAllowed = stderrTail
    .map((line) => /\[([^\]@]+?) @ [^\]]+\] Format not on whitelist/.exec(line))
    .find(Boolean);
  if (notAllowed) {
    return unsupportedFormat(`The container (${notAllowed[1].trim()}) is not supported. Send MP4, MOV, M4A or WAV.`);
  }
  if (network && stderrTail.some((line) => NETWORK_FAILURE.test(line))) {
    return { ok: false, code: 'invalid_url', message: 'The source URL could not be read.' };
  }
  return invalidMedia('The file is corrupt or cannot be decoded.');
}

const NETWORK_FAILURE =
  /Server returned|Connection refused|Connection timed out|timed out|Failed to resolve|No route to host|Network is unreachable|Input\/output error|HTTP error|Protocol not on whitelist/i;

function parseProbeJson(text: string): FfprobeOutput | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as FfprobeOutput) : null;
  } catch {
    return null;
  }
}

function invalidMedia(message: string): ProbeOutcome {
  return { ok: false, code: 'invalid_media', message };
}

function unsupportedFormat(message: string): ProbeOutcome {
  return { ok: false, code: 'unsupported_format', message };
}
