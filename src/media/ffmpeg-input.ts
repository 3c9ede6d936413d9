// What every ffmpeg/ffprobe argv shares: how a user's input is opened (only our demuxers, local files or
// http(s) with a read timeout, never a playlist or a reference to another file), the head of a progress-
// reporting ffmpeg run, and the checks on our own output paths. Pure, no I/O.
import { isAbsolute } from 'node:path';

/** The demuxers any of our tools may run on user input (the mov demuxer covers MP4/MOV/M4A). */
export const ALLOWED_DEMUXERS = 'mov,wav';
/** Network read timeout for URL inputs (µs): a stalled source fails instead of hanging the job. */
export const DEFAULT_RW_TIMEOUT_US = 15_000_000;
/** The AAC bitrate of every audio we encode (sdr2hdr's re-encoded track, audio's M4A). */
export const AUDIO_AAC_BITRATE = '192k';

export function isNetworkInput(input: string): boolean {
  return /^https?:\/\//i.test(input);
}

/** The options before `-i` of every ffmpeg run that reports progress on stdout (the runner parses it). */
export function commonHead(logLevel: 'error' | 'info'): string[] {
  return ['-hide_banner', '-nostdin', '-loglevel', logLevel, '-y', '-progress', 'pipe:1', '-nostats'];
}

export function inputArgs(input: string, rwTimeoutUs?: number): string[] {
  return [...inputOptions(input, rwTimeoutUs), '-i', input];
}

// Only the demuxers we accept ever parse user input, and a file can never make the tool open
// another file or URL (HLS/concat playlists, dref): a local input may read local files only.
export function inputOptions(input: string, rwTimeoutUs = DEFAULT_RW_TIMEOUT_US): string[] {
  if (isNetworkInput(input)) {
    return [
      '-protocol_whitelist',
      'http,https,tcp,tls',
      '-rw_timeout',
      String(rwTimeoutUs),
      '-format_whitelist',
      ALLOWED_DEMUXERS,
    ];
  }
  if (!isAbsolute(input)) throw new Error(`media input must be an absolute path or an http(s) URL: ${input}`);
  return ['-protocol_whitelist', 'file', '-format_whitelist', ALLOWED_DEMUXERS];
}

export function outputPath(output: string): string {
  // A relative name could be read as a protocol ("x:y") or an option; the worker always has absolute paths.
  if (!isAbsolute(output)) throw new Error(`media output must be an absolute path: ${output}`);
  return output;
}
