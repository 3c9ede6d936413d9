// Input clips for the benchmarks, made with ffmpeg once and kept in a cache directory between runs
// (the large one takes a while to write).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CACHE = process.env.BENCH_CACHE_DIR ?? join(tmpdir(), 'mediajobs-bench-media');

// docs/media.md: through rgb24 and an explicit BT.709 matrix, or swscale silently uses BT.601.
const BT709_PICTURE = 'format=rgb24,scale=out_color_matrix=bt709:out_range=tv,format=yuv420p';
const BT709_TAGS = ['-color_primaries', 'bt709', '-color_trc', 'bt709', '-colorspace', 'bt709', '-color_range', 'tv'];

async function cached(name: string, args: (path: string) => string[]): Promise<string> {
  await mkdir(CACHE, { recursive: true });
  const path = join(CACHE, name);
  if (existsSync(path)) return path;
  const partial = join(CACHE, `partial-${process.pid}-${name}`);
  await run('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args(partial)], {
    maxBuffer: 16 * 1024 * 1024,
  });
  await rename(partial, path);
  return path;
}

/** A correctly tagged SDR BT.709 H.264 + AAC clip: the normal sdr2hdr input. */
export function sdrClip(width: number, height: number, seconds: number): Promise<string> {
  return cached(`sdr-${width}x${height}-${seconds}s.mp4`, (path) => sdrArgs(width, height, seconds, [], path));
}

/** testsrc2 and a 440 Hz tone, H.264 (with `gop`, x264's options such as a keyframe interval) + AAC. */
function sdrArgs(width: number, height: number, seconds: number, gop: string[], path: string): string[] {
  return [
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${width}x${height}:rate=30:duration=${seconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-vf',
    BT709_PICTURE,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '18',
    ...gop,
    ...BT709_TAGS,
    '-c:a',
    'aac',
    '-shortest',
    path,
  ];
}

/**
 * A large input (≥ 500 MB for 12 s): 1080p MPEG-2, every frame an I-frame at a constant 400 Mbit/s
 * (the encoder pads each frame to the rate), the way a camera-original or mezzanine file is large.
 * Cheap to write and to decode, so the memory benchmark is about file size, not encode time.
 */
export async function largeClip(seconds: number): Promise<{ path: string; sizeBytes: number }> {
  const path = await cached(`large-cbr-1920x1080-${seconds}s.mp4`, (out) => [
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1920x1080:rate=30:duration=${seconds}`,
    '-vf',
    BT709_PICTURE,
    '-c:v',
    'mpeg2video',
    '-g',
    '1',
    '-b:v',
    '400M',
    '-minrate',
    '400M',
    '-maxrate',
    '400M',
    '-bufsize',
    '200M',
    ...BT709_TAGS,
    out,
  ]);
  return { path, sizeBytes: (await stat(path)).size };
}

/** As sdrClip, with a keyframe every `gopSeconds` (an editor's or camera's GOP), so a segmented encode can cut. */
export function keyframedSdrClip(width: number, height: number, seconds: number, gopSeconds = 2): Promise<string> {
  return cached(`sdr-gop${gopSeconds}-${width}x${height}-${seconds}s.mp4`, (path) =>
    sdrArgs(width, height, seconds, ['-g', String(30 * gopSeconds)], path),
  );
}
