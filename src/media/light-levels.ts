// The light levels of an HDR10 picture as a decoder sees it (CTA-861.3): MaxCLL, the brightest pixel's
// max(R,G,B) in cd/m²; MaxFALL, the brightest frame's average of max(R,G,B). The one owner of that
// computation: the sdr2hdr pipeline writes these numbers into the file (hdr-metadata.ts), and the job view
// and its checks read the same ones.
import { pqDecode } from './hdr-mapping';
import { ALLOWED_DEMUXERS } from './ffmpeg-args';
import { defaultFfmpegPath, runMediaProcess, type MediaProcessResult } from './run-ffmpeg';
import { isAbsolute } from 'node:path';

export interface LightLevels {
  /** Maximum content light level, cd/m² (rounded; CTA-861.3 carries integers). */
  maxCll: number;
  /** Maximum frame-average light level, cd/m². */
  maxFall: number;
}

/**
 * Decodes a PQ file's video to 16-bit R'G'B' (zscale: the file's own matrix and range, chroma upsampled as a
 * player does, transfer untouched) on stdout, for LightMeter.
 */
export function buildLightMeasureArgs(input: string): string[] {
  if (!isAbsolute(input)) throw new Error(`media path must be absolute: ${input}`);
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    ALLOWED_DEMUXERS,
    '-i',
    input,
    '-map',
    '0:v:0',
    '-vf',
    'zscale=m=gbr:r=pc,format=gbrp16le',
    '-f',
    'rawvideo',
    'pipe:1',
  ];
}

// PQ signal in 16 bits → cd/m²: one table, built on first use.
let pqTable: Float64Array | undefined;
function pqNits(): Float64Array {
  if (!pqTable) {
    pqTable = new Float64Array(65536);
    for (let code = 0; code < 65536; code++) pqTable[code] = pqDecode(code / 65535);
  }
  return pqTable;
}

/** Accumulates MaxCLL and MaxFALL over raw gbrp16le frames pushed in chunks of any size. */
export class LightMeter {
  private readonly frameBytes: number;
  private readonly pixels: number;
  private readonly frame: Uint8Array;
  private filled = 0;
  private frames = 0;
  private brightestPixel = 0;
  private brightestFrameAverage = 0;

  constructor(width: number, height: number) {
    this.pixels = width * height;
    this.frameBytes = this.pixels * 2 * 3;
    this.frame = new Uint8Array(new ArrayBuffer(this.frameBytes));
  }

  push(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(chunk.length - offset, this.frameBytes - this.filled);
      this.frame.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.frameBytes) {
        this.measureFrame();
        this.filled = 0;
      }
    }
  }

  /** The levels over every whole frame pushed; null when none was. */
  finish(): (LightLevels & { frames: number }) | null {
    if (this.frames === 0) return null;
    return {
      maxCll: Math.round(this.brightestPixel),
      maxFall: Math.round(this.brightestFrameAverage),
      frames: this.frames,
    };
  }

  private measureFrame(): void {
    const table = pqNits();
    const planes = new Uint16Array(this.frame.buffer, 0, this.pixels * 3);
    const n = this.pixels;
    let frameMax = 0;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      // Planes are G, B, R; the transfer is monotonic, so the brightest channel is the largest code.
      const g = planes[i];
      const b = planes[n + i];
      const r = planes[2 * n + i];
      const code = g > b ? (g > r ? g : r) : b > r ? b : r;
      if (code > frameMax) frameMax = code;
      sum += table[code];
    }
    this.frames += 1;
    this.brightestPixel = Math.max(this.brightestPixel, table[frameMax]);
    this.brightestFrameAverage = Math.max(this.brightestFrameAverage, sum / n);
  }
}

export interface MeasureOptions {
  width: number;
  height: number;
  ffmpegPath?: string;
  signal?: AbortSignal;
  timeLimitMs?: number;
}

/** MaxCLL/MaxFALL of a PQ file's decoded picture, or the run that failed. */
export async function measureLightLevels(
  path: string,
  options: MeasureOptions,
): Promise<{ ok: true; levels: LightLevels } | { ok: false; run: MediaProcessResult | null }> {
  const meter = new LightMeter(options.width, options.height);
  const run = await runMediaProcess(options.ffmpegPath ?? defaultFfmpegPath(), buildLightMeasureArgs(path), {
    signal: options.signal,
    timeLimitMs: options.timeLimitMs,
    onStdout: (chunk) => meter.push(chunk),
  });
  if (run.status !== 'succeeded') return { ok: false, run };
  const measured = meter.finish();
  if (!measured) return { ok: false, run: null };
  return { ok: true, levels: { maxCll: measured.maxCll, maxFall: measured.maxFall } };
}

/** The levels of an item made of parts (segments): the brightest pixel and the brightest frame of any part. */
export function combineLightLevels(parts: LightLevels[]): LightLevels {
  return {
    maxCll: Math.max(0, ...parts.map((part) => part.maxCll)),
    maxFall: Math.max(0, ...parts.map((part) => part.maxFall)),
  };
}
