// Segment-parallel sdr2hdr (SEGMENT_SECONDS): the source's video is cut at keyframes without
// re-encoding, each part is encoded by buildSdrToHdrArgs exactly as a whole item would be (no audio),
// and the encoded parts are joined by the concat demuxer without re-encoding, with the source's audio
// muxed once. Keyframe cuts keep every frame exactly once (a part starts with the keyframe that ends
// the one before), and x265's repeat-headers gives each part its own VPS/SPS/PPS and HDR10 SEI, so
// the join is one valid HEVC Main10 stream.
import { writeFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { ALLOWED_DEMUXERS } from './ffmpeg-input';
import { hdrAudioCodecArgs } from './hdr-args';
import { readHdrMetadata, writeHdrMetadata } from './hdr-metadata';
import { combineLightLevels } from './light-levels';
import type { VideoOutputContainer } from './media.types';
import {
  defaultFfmpegPath,
  defaultFfprobePath,
  runFfmpeg,
  runMediaProcess,
  type MediaProcessResult,
} from './run-ffmpeg';

/** No banner, no stdin, errors only, overwrite: how every ffmpeg run here starts. */
const QUIET = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'];

/** ffprobe listing the presentation time of every keyframe of the video stream (no decoding of other frames). */
export function buildKeyframeProbeArgs(input: string, videoIndex: number): string[] {
  return [
    '-v',
    'error',
    ...localInput(input),
    '-select_streams',
    String(videoIndex),
    '-skip_frame',
    'nokey',
    '-show_entries',
    'frame=pts_time,best_effort_timestamp_time',
    '-of',
    'csv=p=0',
    input,
  ];
}

/** The keyframe times from buildKeyframeProbeArgs' output (first number of each line). */
export function parseKeyframeTimes(stdout: string): number[] {
  const times: number[] = [];
  for (const line of stdout.split('\n')) {
    const value = line
      .split(',')
      .map((field) => Number.parseFloat(field))
      .find((number) => Number.isFinite(number));
    if (value !== undefined) times.push(value);
  }
  return times;
}

/**
 * The video stream only, copied (no re-encode) into MP4 parts cut at `cuts` (keyframe times): the
 * segment muxer cuts at the first keyframe at or after each time, and each part's timestamps start at 0.
 */
export function buildSplitArgs(input: string, videoIndex: number, cuts: number[], outputPattern: string): string[] {
  return [
    ...oneStreamOf(input, videoIndex),
    '-c',
    'copy',
    '-f',
    'segment',
    '-segment_format',
    'mp4',
    '-segment_times',
    cuts.map((cut) => cut.toFixed(6)).join(','),
    '-reset_timestamps',
    '1',
    absolute(outputPattern),
  ];
}

/** The audio stream alone, copied into a QuickTime file (which holds every audio codec we accept). */
export function buildAudioExtractArgs(input: string, audioIndex: number, output: string): string[] {
  return [...oneStreamOf(input, audioIndex), '-vn', '-c', 'copy', '-f', 'mov', absolute(output)];
}

/** The concat demuxer's list of the encoded parts, in order (paths are the worker's own). */
export function concatList(parts: string[]): string {
  return parts.map((part) => `file '${absolute(part).replace(/'/g, "'\\''")}'\n`).join('');
}

/**
 * An input of the parts listed by concatList: our own list of our own files, so the concat demuxer may
 * open local files, nothing else.
 */
export function concatInput(list: string): string[] {
  return [
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    `concat,${ALLOWED_DEMUXERS}`,
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    absolute(list),
  ];
}

/**
 * Joins the encoded parts without re-encoding, and the source's audio (once, from `audio`): AAC is
 * copied, anything else is encoded to AAC, exactly as a single-pass encode does.
 */
export function buildJoinArgs(options: {
  list: string;
  audio: { path: string; codec: string } | null;
  output: string;
  container: VideoOutputContainer;
}): string[] {
  const audio = options.audio;
  return [
    ...QUIET,
    '-progress',
    'pipe:1',
    '-nostats',
    ...concatInput(options.list),
    ...(audio
      ? ['-protocol_whitelist', 'file', '-format_whitelist', ALLOWED_DEMUXERS, '-i', absolute(audio.path)]
      : []),
    '-map',
    '0:v:0',
    ...(audio ? ['-map', '1:a:0'] : []),
    '-c:v',
    'copy',
    '-tag:v',
    'hvc1',
    ...(audio ? hdrAudioCodecArgs(audio.codec) : ['-an']),
    '-movflags',
    '+faststart',
    '-f',
    options.container,
    absolute(options.output),
  ];
}

export interface ToolOptions {
  signal?: AbortSignal;
  timeLimitMs?: number;
  ffmpegPath?: string;
  ffprobePath?: string;
}

export type ToolOutcome = { ok: true } | { ok: false; run: MediaProcessResult };

/** The keyframe times of the video stream; null when ffprobe failed. */
export async function probeKeyframes(
  input: string,
  videoIndex: number,
  options: ToolOptions,
): Promise<number[] | null> {
  const chunks: Buffer[] = [];
  const run = await runMediaProcess(
    options.ffprobePath ?? defaultFfprobePath(),
    buildKeyframeProbeArgs(input, videoIndex),
    {
      signal: options.signal,
      timeLimitMs: options.timeLimitMs,
      onStdout: (chunk) => void chunks.push(chunk),
    },
  );
  if (run.status !== 'succeeded') return null;
  return parseKeyframeTimes(Buffer.concat(chunks).toString('utf8'));
}

export async function splitVideo(
  input: string,
  videoIndex: number,
  cuts: number[],
  outputPattern: string,
  options: ToolOptions,
): Promise<ToolOutcome> {
  return tool(buildSplitArgs(input, videoIndex, cuts, outputPattern), options);
}

export async function extractAudio(
  input: string,
  audioIndex: number,
  output: string,
  options: ToolOptions,
): Promise<ToolOutcome> {
  return tool(buildAudioExtractArgs(input, audioIndex, output), options);
}

export async function joinParts(
  parts: string[],
  listPath: string,
  audio: { path: string; codec: string } | null,
  output: string,
  container: VideoOutputContainer,
  options: ToolOptions,
): Promise<ToolOutcome> {
  await writeFile(listPath, concatList(parts));
  const joined = outcome(
    await runFfmpeg(buildJoinArgs({ list: listPath, audio, output, container }), {
      ffmpegPath: options.ffmpegPath,
      signal: options.signal,
      timeLimitMs: options.timeLimitMs,
    }),
  );
  if (joined.ok) await writeWholeItemLightLevels(parts, output);
  return joined;
}

/**
 * HDR10 parts each carry their own measured light levels (the pipeline wrote them); the joined item's are
 * the brightest pixel and frame of any part, written over the copies of the parts' SEI and boxes.
 */
async function writeWholeItemLightLevels(parts: string[], output: string): Promise<void> {
  const each = await Promise.all(parts.map((part) => readHdrMetadata(part)));
  const measured = each.filter((part) => part !== null);
  if (measured.length === 0 || measured.length !== parts.length) return;
  await writeHdrMetadata(output, {
    levels: combineLightLevels(measured.map((part) => part.levels)),
    peakNits: measured[0].peakNits,
  });
}

async function tool(args: string[], options: ToolOptions): Promise<ToolOutcome> {
  return outcome(
    await runMediaProcess(options.ffmpegPath ?? defaultFfmpegPath(), args, {
      signal: options.signal,
      timeLimitMs: options.timeLimitMs,
    }),
  );
}

function outcome(run: MediaProcessResult): ToolOutcome {
  return run.status === 'succeeded' ? { ok: true } : { ok: false, run };
}

/** Quiet and overwriting, our own local `input`, one stream of it mapped: how a split and an extract start. */
function oneStreamOf(input: string, streamIndex: number): string[] {
  return [...QUIET, ...localInput(input), '-i', input, '-map', `0:${streamIndex}`];
}

/** Our own local files only (the source the worker downloaded, its parts): never a URL or a playlist. */
function localInput(input: string): string[] {
  absolute(input);
  return ['-protocol_whitelist', 'file', '-format_whitelist', ALLOWED_DEMUXERS];
}

function absolute(path: string): string {
  if (!isAbsolute(path)) throw new Error(`media path must be absolute: ${path}`);
  return path;
}
