// Reads back the media playlists ffmpeg's hls muxer wrote: the segments with their durations, which the
// master playlist's bandwidths and the alignment check are computed from. Only our own files are read
// (one writer, a known shape); the tests parse them with a real HLS parser.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface MediaSegment {
  uri: string;
  /** EXTINF, seconds. */
  duration: number;
  bytes: number;
}

export interface MediaPlaylist {
  targetDuration: number;
  /** The EXT-X-MAP's URI (the init segment). */
  map: string | null;
  segments: MediaSegment[];
}

/** A media playlist and the size of each of its segments (files beside it). */
export async function readMediaPlaylist(folder: string, name: string): Promise<MediaPlaylist> {
  const text = await readFile(join(folder, name), 'utf8');
  let targetDuration = 0;
  let map: string | null = null;
  let pending: number | null = null;
  const listed: Array<{ uri: string; duration: number }> = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-TARGETDURATION:')) targetDuration = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)?.[1] ?? null;
    else if (line.startsWith('#EXTINF:')) pending = parseFloat(line.slice(8));
    else if (line && !line.startsWith('#') && pending !== null) {
      listed.push({ uri: line, duration: pending });
      pending = null;
    }
  }
  const segments = await Promise.all(
    listed.map(async (segment) => ({ ...segment, bytes: (await stat(join(folder, segment.uri))).size })),
  );
  return { targetDuration, map, segments };
}

/** Where each segment starts (s from the first), from the durations: what a player switches on. */
export function segmentStarts(playlist: MediaPlaylist): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const segment of playlist.segments) {
    starts.push(at);
    at += segment.duration;
  }
  return starts;
}

export function totalDuration(playlist: MediaPlaylist): number {
  return playlist.segments.reduce((sum, segment) => sum + segment.duration, 0);
}

/**
 * RFC 8216 §4.3.4.2: the peak segment bit rate is the largest bit rate of any contiguous set of segments
 * whose total duration is between 0.5 and 1.5 times the target duration (a stream shorter than half of it:
 * its own rate). Bits per second.
 */
export function peakBitrate(playlist: MediaPlaylist): number {
  const { segments, targetDuration } = playlist;
  let peak = 0;
  for (let first = 0; first < segments.length; first++) {
    let bytes = 0;
    let seconds = 0;
    for (let last = first; last < segments.length; last++) {
      bytes += segments[last].bytes;
      seconds += segments[last].duration;
      if (seconds > 1.5 * targetDuration) break;
      if (seconds >= 0.5 * targetDuration) peak = Math.max(peak, (bytes * 8) / seconds);
    }
  }
  return Math.round(peak > 0 ? peak : averageBitrate(playlist));
}

/** The whole stream's bits over its duration (bits per second). */
export function averageBitrate(playlist: MediaPlaylist): number {
  const seconds = totalDuration(playlist);
  const bytes = playlist.segments.reduce((sum, segment) => sum + segment.bytes, 0);
  return seconds > 0 ? Math.round((bytes * 8) / seconds) : 0;
}
