// The light levels of an HDR10 picture as a decoder sees it (CTA-861.3): MaxCLL, the brightest pixel's
// max(R,G,B) in cd/m²; MaxFALL, the brightest frame's average of max(R,G,B). The one owner of that
// computation: the sdr2hdr pipeline writes these numbers into the file (hdr-metadata.ts), and the job view
// and its checks read the same ones.
import { pqDecode } from './hdr-mapping';
import { inputOptions } from './ffmpeg-input';
import { parseSsimY, pickFrames, referenceInputArgs } from './round-trip';
import { defaultFfmpegPath, runMediaProcess, type MediaProcessResult } from './run-ffmpeg';
import { isAbsolute } from 'node:path';

export interface LightLevels {
  /** Maximum content light level, cd/m² (rounded; CTA-861.3 carries integers). */
  maxCll: number;
  /** Maximum frame-average light level, cd/m². */
  maxFall: number;
}

/**
 * The decoded picture as 16-bit R'G'B' (zscale: the file's own matrix and range, chroma upsampled as a
 * player does, transfer untouched), reduced to one plane of max(R',G',B') per pixel by ffmpeg (blend's
 * `lighten` is the integer max of its inputs): the transfer is monotonic, so the brightest channel is the
 * largest code, and the meter reads a third of the bytes. `[in]` in, `[meter]` out (gray16le).
 */
export const LIGHT_PICTURE =
  '[in]zscale=m=gbr:r=pc,format=gbrp16le,extractplanes=g+b+r[g][b][r];' +
  '[g][b]blend=all_mode=lighten[gb];[gb][r]blend=all_mode=lighten,format=gray16le[meter]';

/** The round trip measured in the light pass (src/media/round-trip.ts): the output check's SSIM. */
export interface LightPassRoundTrip {
  every: number;
  /** The output back to SDR (backToSdr). */
  back: string;
  /**
   * What the output's sampled frames are compared with: the source's sampled frames kept by the encode (raw
   * yuv420p at the output's size: referenceOutputArgs), or the source itself, decoded in this pass and
   * sampled and scaled as the check does (`compared`: sourceAsCompared).
   */
  against: { referencePath: string; size: { width: number; height: number } } | { source: string; compared: string };
}

/**
 * Decodes a PQ file's video to one 16-bit plane of max(R',G',B') per pixel (LIGHT_PICTURE) on stdout, for
 * LightMeter.
 */
export function buildLightMeasureArgs(input: string, roundTrip?: LightPassRoundTrip): string[] {
  if (!isAbsolute(input)) throw new Error(`media path must be absolute: ${input}`);
  if (roundTrip) {
    const { against } = roundTrip;
    const [inputs, compared] =
      'referencePath' in against
        ? [referenceInputArgs(against.referencePath, against.size), '[1:v]setpts=N/(10*TB)']
        : [
            [...inputOptions(against.source), '-i', against.source],
            `[1:v:0]${pickFrames(roundTrip.every)},${against.compared}`,
          ];
    // One decode of the written file for both: the light meter's frames on stdout, and the sampled
    // frames taken back to SDR and compared with the source's — ssim into a null sink.
    return [
      '-hide_banner',
      '-nostdin',
      '-nostats',
      '-loglevel',
      'info',
      ...inputOptions(input),
      '-i',
      input,
      ...inputs,
      '-filter_complex',
      `[0:v:0]split=2[light][trip];${LIGHT_PICTURE.replace('[in]', '[light]')};` +
        `[trip]${pickFrames(roundTrip.every)},${roundTrip.back}[a];${compared}[b];[a][b]ssim,nullsink`,
      '-map',
      '[meter]',
      '-f',
      'rawvideo',
      'pipe:1',
    ];
  }
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    ...inputOptions(input),
    '-i',
    input,
    '-filter_complex',
    LIGHT_PICTURE.replace('[in]', '[0:v:0]'),
    '-map',
    '[meter]',
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

/** Accumulates MaxCLL and MaxFALL over raw gray16le frames of max(R',G',B') pushed in chunks of any size. */
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
    this.frameBytes = this.pixels * 2;
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
    // One code per pixel: its brightest channel's (LIGHT_PICTURE).
    const codes = new Uint16Array(this.frame.buffer, 0, this.pixels);
    const n = this.pixels;
    let frameMax = 0;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const code = codes[i];
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
  /** Also measure the round trip's SSIM in the same decode (`roundTripSsim` of the answer). */
  roundTrip?: LightPassRoundTrip;
}

/** MaxCLL/MaxFALL of a PQ file's decoded picture (and its round trip when asked), or the run that failed. */
export async function measureLightLevels(
  path: string,
  options: MeasureOptions,
): Promise<
  { ok: true; levels: LightLevels; roundTripSsim: number | null } | { ok: false; run: MediaProcessResult | null }
> {
  const meter = new LightMeter(options.width, options.height);
  const args = buildLightMeasureArgs(path, options.roundTrip);
  const run = await runMediaProcess(options.ffmpegPath ?? defaultFfmpegPath(), args, {
    signal: options.signal,
    timeLimitMs: options.timeLimitMs,
    onStdout: (chunk) => meter.push(chunk),
  });
  if (run.status !== 'succeeded') return { ok: false, run };
  const measured = meter.finish();
  if (!measured) return { ok: false, run: null };
  // No score (ssim printed none): the check measures it from the file instead.
  const roundTripSsim = options.roundTrip ? parseSsimY(run.stderrTail) : null;
  return { ok: true, levels: { maxCll: measured.maxCll, maxFall: measured.maxFall }, roundTripSsim };
}

/** The levels of an item made of parts (segments): the brightest pixel and the brightest frame of any part. */
export function combineLightLevels(parts: LightLevels[]): LightLevels {
  return {
    maxCll: Math.max(0, ...parts.map((part) => part.maxCll)),
    maxFall: Math.max(0, ...parts.map((part) => part.maxFall)),
  };
}
