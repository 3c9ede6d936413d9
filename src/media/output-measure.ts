// What an output file is, read from the file itself after it was made (never copied from the request):
// ffprobe for the streams and the colour tags as a decoder reads them (the first frame's side data:
// ST 2086 and the content light levels), ebur128 for loudness, and the round trip of a video output back
// to SDR for its fidelity. output-checks.ts judges these numbers; the job view shows them.
import { open, rm, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { ALLOWED_DEMUXERS } from './ffmpeg-input';
import { parseEbur128Summary } from './loudness-reports';
import { containerOf } from './probe';
import {
  backToSdr,
  inverseLutPath,
  parseSsimY,
  pickFrames,
  sampleEvery,
  sourceAsCompared,
  writeInverseLut,
  type RoundTripChoice,
} from './round-trip';
import { defaultFfmpegPath, defaultFfprobePath, runFfmpeg, runMediaProcess } from './run-ffmpeg';
import type { VideoStreamInfo } from './media.types';

export interface MeasureTools {
  ffmpegPath?: string;
  ffprobePath?: string;
  signal?: AbortSignal;
  timeLimitMs?: number;
}

/** A video output as a player's decoder reads it (snake_case: it is the job view's `output.video`). */
export interface MeasuredVideo {
  container: string | null;
  codec: string;
  profile: string | null;
  width: number;
  height: number;
  frame_rate: number | null;
  frames: number;
  duration_seconds: number;
  bytes: number;
  bit_depth: number;
  pix_fmt: string | null;
  primaries: string | null;
  transfer: string | null;
  matrix: string | null;
  range: string | null;
  /** ST 2086 as the first frame carries it (null: absent). */
  mastering_display: { min_nits: number; max_nits: number } | null;
  /** CTA-861.3 as the first frame carries it (null: absent). */
  content_light: { max_cll: number; max_fall: number } | null;
  audio_streams: { codec: string; channels: number; sample_rate: number }[];
}

export interface MeasuredAudio {
  container: string | null;
  codec: string;
  channels: number;
  sample_rate: number;
  duration_seconds: number;
  bytes: number;
  integrated_lufs: number | null;
  true_peak_dbtp: number | null;
  loudness_range_lu: number | null;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** ffprobe's JSON for a local file (our own output, or the item's source: only the demuxers we accept). */
async function ffprobe(path: string, args: string[], tools: MeasureTools, concat = false): Promise<Json> {
  if (!isAbsolute(path)) throw new Error(`media path must be absolute: ${path}`);
  const chunks: Buffer[] = [];
  const whitelist = concat ? ['-f', 'concat', '-safe', '0'] : [];
  const run = await runMediaProcess(
    tools.ffprobePath ?? defaultFfprobePath(),
    [
      '-v',
      'error',
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      `${ALLOWED_DEMUXERS},concat`,
      ...whitelist,
    ].concat(args, ['-of', 'json', path]),
    { signal: tools.signal, timeLimitMs: tools.timeLimitMs, onStdout: (chunk) => void chunks.push(chunk) },
  );
  if (run.status !== 'succeeded') throw new MeasureFailed(run.status, run.stderrTail);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
}

/** A measurement that could not be made (the tool failed, ran out of time, or was cancelled). */
export class MeasureFailed extends Error {
  constructor(
    readonly status: string,
    readonly stderrTail: string[],
  ) {
    super(`measurement ${status}`);
  }
}

const rate = (text: unknown): number | null => {
  const [num, den] = String(text ?? '')
    .split('/')
    .map(Number);
  return num > 0 && den > 0 ? Math.round((num / den) * 1000) / 1000 : null;
};
const numberOr = (value: unknown, fallback: number): number =>
  Number.isFinite(Number(value)) ? Number(value) : fallback;
const ratio = (text: unknown): number => {
  const [num, den] = String(text ?? '')
    .split('/')
    .map(Number);
  return den ? num / den : num;
};
const tag = (value: unknown): string | null =>
  typeof value === 'string' && value !== 'unknown' && value !== 'unspecified' ? value : null;

export async function measureVideo(path: string, tools: MeasureTools): Promise<MeasuredVideo> {
  const [info, first] = await Promise.all([
    ffprobe(path, ['-count_packets', '-show_streams', '-show_format'], tools),
    ffprobe(path, ['-select_streams', 'v:0', '-show_frames', '-read_intervals', '%+#1'], tools),
  ]);
  const streams = (info.streams ?? []) as Json[];
  const video = streams.find((stream) => stream.codec_type === 'video');
  if (!video) throw new MeasureFailed('no_video', []);
  const sideData = ((first.frames?.[0]?.side_data_list ?? []) as Json[]).concat(video.side_data_list ?? []);
  const mastering = sideData.find((entry) => entry.side_data_type === 'Mastering display metadata');
  const light = sideData.find((entry) => entry.side_data_type === 'Content light level metadata');
  const fps = rate(video.r_frame_rate) ?? rate(video.avg_frame_rate);
  const frames = numberOr(video.nb_read_packets, 0);
  const shown = await shownSeconds(path, numberOr(info.format?.duration, 0), numberOr(video.start_time, 0), tools);
  return {
    container: containerOf(String(info.format?.format_name ?? ''), info.format?.tags ?? {}),
    codec: String(video.codec_name),
    profile: typeof video.profile === 'string' ? video.profile.toLowerCase().replace(/\s+/g, '') : null,
    width: Number(video.width),
    height: Number(video.height),
    frame_rate: fps,
    frames,
    duration_seconds: round3(shown ?? numberOr(video.duration, fps ? frames / fps : 0)),
    bytes: numberOr(info.format?.size, 0),
    bit_depth: bitDepth(video),
    pix_fmt: tag(video.pix_fmt),
    primaries: tag(video.color_primaries),
    transfer: tag(video.color_transfer),
    matrix: tag(video.color_space),
    range: tag(video.color_range),
    mastering_display: mastering
      ? {
          min_nits: Math.round(ratio(mastering.min_luminance) * 10000) / 10000,
          max_nits: round3(ratio(mastering.max_luminance)),
        }
      : null,
    content_light: light ? { max_cll: Number(light.max_content), max_fall: Number(light.max_average) } : null,
    audio_streams: streams
      .filter((stream) => stream.codec_type === 'audio')
      .map((stream) => ({
        codec: String(stream.codec_name),
        channels: Number(stream.channels),
        sample_rate: Number(stream.sample_rate),
      })),
  };
}

/**
 * How long the video stream plays: the end of its last frame (pts + duration) after its start. Read from
 * the packets of the last seconds only (a seek near the end): an MP4's stream `duration` can miss a frame
 * shown late, the container's covers the audio too.
 */
async function shownSeconds(path: string, total: number, start: number, tools: MeasureTools): Promise<number | null> {
  const tail = await ffprobe(
    path,
    ['-select_streams', 'v:0', '-read_intervals', `${Math.max(0, total - 3)}%`].concat([
      '-show_entries',
      'packet=pts_time,duration_time',
    ]),
    tools,
  );
  let end: number | null = null;
  for (const packet of (tail.packets ?? []) as Json[]) {
    const at = Number(packet.pts_time) + numberOr(packet.duration_time, 0);
    if (Number.isFinite(at)) end = Math.max(end ?? at, at);
  }
  return end === null ? null : end - start;
}

function bitDepth(video: Json): number {
  const raw = Number(video.bits_per_raw_sample);
  if (raw > 0) return raw;
  const match = /p(\d+)(le|be)$/.exec(String(video.pix_fmt ?? ''));
  return match ? Number(match[1]) : 8;
}

/**
 * One ffmpeg run reads everything (a second process would cost as much as the check is allowed): the
 * input banner (container, codec, rate, channels), the decoded duration (-progress's out_time), and the
 * EBU R128 summary (ebur128 with true peak; its per-frame lines only at verbose level).
 */
export async function measureAudio(path: string, tools: MeasureTools): Promise<MeasuredAudio> {
  if (!isAbsolute(path)) throw new Error(`media path must be absolute: ${path}`);
  const meter = await runFfmpeg(
    [
      '-nostdin',
      '-nostats',
      '-progress',
      'pipe:1',
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      ALLOWED_DEMUXERS,
    ].concat(['-i', path, '-map', '0:a:0', '-af', 'ebur128=peak=true:framelog=verbose', '-f', 'null', '-']),
    { ffmpegPath: tools.ffmpegPath, signal: tools.signal, timeLimitMs: tools.timeLimitMs, stderrLines: 80 },
  );
  if (meter.status !== 'succeeded') throw new MeasureFailed(meter.status, meter.stderrTail);
  const text = meter.stderrTail.join('\n');
  const stream = /Stream #0:\d+[^:]*: Audio: (\w+)[^,]*, (\d+) Hz, ([^,]+),/.exec(text);
  if (!stream) throw new MeasureFailed('no_audio', meter.stderrTail);
  const format = /Input #0, ([^ ]+), from/.exec(text)?.[1]?.replace(/,$/, '') ?? '';
  // A brand is four characters; the banner drops trailing spaces ('M4A ' prints as 'M4A').
  const brand = /major_brand\s*:\s*(\S+)/.exec(text)?.[1]?.padEnd(4, ' ');
  const loudness = parseEbur128Summary(meter.stderrTail);
  return {
    container: containerOf(format, brand ? { major_brand: brand } : {}),
    codec: stream[1],
    channels: CHANNELS[stream[3].trim()] ?? (Number.parseInt(stream[3], 10) || 0),
    sample_rate: Number(stream[2]),
    duration_seconds: round3(meter.outTimeSeconds ?? 0),
    bytes: (await stat(path)).size,
    integrated_lufs: finite(loudness?.integratedLufs),
    true_peak_dbtp: finite(loudness?.truePeakDbtp),
    loudness_range_lu: finite(loudness?.lra),
  };
}

/**
 * A 16-bit PCM WAV output's facts from its own RIFF header (fmt and data chunks), with loudness metered
 * on the very samples its encoder wrote (loudness-pipeline.ts `written`): what measureAudio reads, without a second
 * ffmpeg pass. Null for anything else (another codec, a header that does not add up): measure it in full.
 */
export async function measurePcmWav(path: string, written: LoudnessFigures): Promise<MeasuredAudio | null> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(Math.min(size, 4096));
    await file.read(head, 0, head.length, 0);
    if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE')
      return null;
    let format: { codec: number; channels: number; rate: number; align: number; bits: number } | null = null;
    for (let at = 12; at + 8 <= head.length;) {
      const id = head.toString('latin1', at, at + 4);
      const length = head.readUInt32LE(at + 4);
      if (id === 'fmt ' && at + 24 <= head.length) {
        format = {
          codec: head.readUInt16LE(at + 8),
          channels: head.readUInt16LE(at + 10),
          rate: head.readUInt32LE(at + 12),
          align: head.readUInt16LE(at + 20),
          bits: head.readUInt16LE(at + 22),
        };
      }
      if (id === 'data') {
        const pcm16 = format?.codec === 1 && format.bits === 16 && format.channels > 0 && format.rate > 0;
        if (!format || !pcm16 || at + 8 + length !== size || length % format.align !== 0) return null;
        return {
          container: 'wav',
          codec: 'pcm_s16le',
          channels: format.channels,
          sample_rate: format.rate,
          duration_seconds: round3(length / format.align / format.rate),
          bytes: size,
          integrated_lufs: finite(written.integratedLufs),
          true_peak_dbtp: finite(written.truePeakDbtp),
          loudness_range_lu: finite(written.lra),
        };
      }
      at += 8 + length + (length % 2);
    }
    return null;
  } finally {
    await file.close();
  }
}

/** EBU R128 figures as the ebur128 summary gives them (NaN: not measured). */
export interface LoudnessFigures {
  integratedLufs: number;
  truePeakDbtp: number;
  lra: number;
}

const finite = (value: number | undefined) => (value !== undefined && Number.isFinite(value) ? value : null);

/** ffmpeg's channel layout names → channels (anything else: "N channels"). */
const CHANNELS: Record<string, number> = { mono: 1, stereo: 2, '2.1': 3, quad: 4, '5.0': 5, '5.1': 6, '7.1': 8 };

/** The source's video as decoded: frames counted (all parts of a split source), its rate, frames ÷ rate. */
export interface SourceVideo {
  frames: number;
  frameRate: number | null;
  durationSeconds: number;
  width: number;
  height: number;
  colour: Pick<VideoStreamInfo, 'colorTransfer' | 'colorPrimaries' | 'colorSpace' | 'colorRange'>;
}

export async function measureSourceVideo(path: string, concat: boolean, tools: MeasureTools): Promise<SourceVideo> {
  const info = await ffprobe(path, ['-count_packets', '-select_streams', 'v:0', '-show_streams'], tools, concat);
  const video = (info.streams ?? [])[0] as Json | undefined;
  if (!video) throw new MeasureFailed('no_video', []);
  const frames = numberOr(video.nb_read_packets, 0);
  const frameRate = rate(video.r_frame_rate) ?? rate(video.avg_frame_rate);
  return {
    frames,
    frameRate,
    durationSeconds: round3(frameRate ? frames / frameRate : numberOr(video.duration, 0)),
    width: Number(video.width),
    height: Number(video.height),
    colour: {
      colorTransfer: tag(video.color_transfer),
      colorPrimaries: tag(video.color_primaries),
      colorSpace: tag(video.color_space),
      colorRange: tag(video.color_range),
    },
  };
}

/**
 * The source's frames as its decoder gives them (`-count_frames`: a full decode), for when its packet
 * count disagrees with the output: a source cut inside its last frame has a packet the decoder drops, so
 * the packets overstate what any encode can make. Only then is the decode paid for.
 */
export async function decodedSourceVideo(
  path: string,
  concat: boolean,
  counted: SourceVideo,
  tools: MeasureTools,
): Promise<SourceVideo> {
  const info = await ffprobe(path, ['-count_frames', '-select_streams', 'v:0', '-show_streams'], tools, concat);
  const video = (info.streams ?? [])[0] as Json | undefined;
  const frames = numberOr(video?.nb_read_frames, counted.frames);
  const durationSeconds = counted.frameRate ? round3(frames / counted.frameRate) : counted.durationSeconds;
  return { ...counted, frames, durationSeconds };
}

export interface RoundTripRequest extends MeasureTools {
  output: string;
  /** The source (a concat list of its parts when `concat`). */
  source: string;
  concat: boolean;
  sourceVideo: SourceVideo;
  outputSize: { width: number; height: number; frames: number };
  choice: RoundTripChoice;
  samples: number;
}

/**
 * Luma SSIM of the output taken back to the source's SDR with the inverse of its mapping, against the
 * source (scaled to the output's size), on `samples` frames spread evenly: both streams are decoded
 * (cheap next to the encode), only the sampled frames are converted and compared. The PQ pipeline measures
 * the same in its light pass (hdr-pipeline.ts); this is for every output it did not (src/media/round-trip.ts).
 */
export async function roundTripSsim(request: RoundTripRequest): Promise<number> {
  const pick = pickFrames(sampleEvery(request.outputSize.frames, request.samples));
  const lut = inverseLutPath(request.output, request.choice);
  const back = backToSdr(request.choice, request.sourceVideo.colour, lut);
  const sourceChain = `${pick},${sourceAsCompared(request.sourceVideo, request.outputSize)}`;
  try {
    if (lut) await writeInverseLut(lut, request.choice, request.sourceVideo.colour);
    // The whitelists are options of the input after them: each input carries its own.
    const sourceInput = request.concat
      ? [...localInput(`${ALLOWED_DEMUXERS},concat`), '-f', 'concat', '-safe', '0', '-i', request.source]
      : [...localInput(ALLOWED_DEMUXERS), '-i', request.source];
    const run = await runMediaProcess(
      request.ffmpegPath ?? defaultFfmpegPath(),
      ['-hide_banner', '-nostdin', '-nostats']
        .concat([...localInput(ALLOWED_DEMUXERS), '-i', request.output, ...sourceInput])
        .concat(['-filter_complex', `[0:v]${pick},${back}[a];[1:v]${sourceChain}[b];[a][b]ssim`])
        .concat(['-f', 'null', '-']),
      { signal: request.signal, timeLimitMs: request.timeLimitMs, stderrLines: 20 },
    );
    if (run.status !== 'succeeded') throw new MeasureFailed(run.status, run.stderrTail);
    const score = parseSsimY(run.stderrTail);
    if (score === null) throw new MeasureFailed('no_ssim', run.stderrTail);
    return score;
  } finally {
    if (lut) await rm(lut, { force: true });
  }
}

/** An input that may read local files only, parsed by `demuxers` only. */
function localInput(demuxers: string): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', demuxers];
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
