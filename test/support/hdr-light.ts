// What a decoder sees in an HDR output, computed here independently of the service's own meter
// (src/media/light-levels.ts): ffmpeg decodes to float R'G'B' (zscale, the file's own tags), and the
// light follows from the BT.2100 formulas.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bt2020Luminance, hlgDecodeDisplayLight, pqDecode, type Rgb } from '../../src/media/hdr-mapping';

const exec = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';

interface Frames {
  width: number;
  height: number;
  frames: Float32Array[];
}

async function decodeFloatRgb(file: string, filter: string, width: number, height: number): Promise<Frames> {
  const { stdout } = await exec(
    FFMPEG,
    [
      '-v',
      'error',
      '-i',
      file,
      '-map',
      '0:v:0',
      '-vf',
      `${filter}zscale=m=gbr:r=pc,format=gbrpf32le`,
      '-f',
      'rawvideo',
      '-',
    ],
    { encoding: 'buffer', maxBuffer: 1 << 30 },
  );
  const frameBytes = width * height * 3 * 4;
  const frames: Float32Array[] = [];
  for (let at = 0; at + frameBytes <= stdout.length; at += frameBytes) {
    const copy = new Uint8Array(stdout.subarray(at, at + frameBytes));
    frames.push(new Float32Array(copy.buffer));
  }
  return { width, height, frames };
}

/** MaxCLL and MaxFALL of a PQ file as decoded (max(R,G,B) per pixel, CTA-861.3), unrounded. */
export async function decodedLightLevels(
  file: string,
  width: number,
  height: number,
): Promise<{ maxCll: number; maxFall: number; frames: number }> {
  const { frames } = await decodeFloatRgb(file, '', width, height);
  const n = width * height;
  let maxCll = 0;
  let maxFall = 0;
  for (const frame of frames) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const light = pqDecode(Math.max(frame[i], frame[n + i], frame[2 * n + i]));
      sum += light;
      if (light > maxCll) maxCll = light;
    }
    maxFall = Math.max(maxFall, sum / n);
  }
  return { maxCll, maxFall, frames: frames.length };
}

/** Mean luminance (cd/m², BT.2020 Y of the display light) of a box of the last frame, its edges left out. */
export async function patchLuminance(
  file: string,
  box: { x: number; y: number; w: number; h: number },
  transfer: 'pq' | 'hlg',
  inset = 4,
): Promise<number> {
  const w = box.w - 2 * inset;
  const h = box.h - 2 * inset;
  const { frames } = await decodeFloatRgb(file, `crop=${w}:${h}:${box.x + inset}:${box.y + inset},`, w, h);
  const frame = frames[frames.length - 1];
  const n = w * h;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    // gbrp planes: G, B, R.
    const signals: Rgb = [frame[2 * n + i], frame[i], frame[n + i]];
    const light = transfer === 'pq' ? (signals.map(pqDecode) as Rgb) : hlgDecodeDisplayLight(signals);
    sum += bt2020Luminance(light);
  }
  return sum / n;
}

/** Luminance (cd/m²) of every pixel of one row of the last frame. */
export async function rowLuminance(
  file: string,
  row: number,
  width: number,
  transfer: 'pq' | 'hlg',
): Promise<number[]> {
  // Two rows: a 4:2:0 picture cannot be cropped to one; the first is the one asked for.
  const { frames } = await decodeFloatRgb(file, `crop=${width}:2:0:${row},`, width, 2);
  const frame = frames[frames.length - 1];
  const n = width * 2;
  return Array.from({ length: width }, (_, i) => {
    const signals: Rgb = [frame[2 * n + i], frame[i], frame[n + i]];
    return bt2020Luminance(transfer === 'pq' ? (signals.map(pqDecode) as Rgb) : hlgDecodeDisplayLight(signals));
  });
}
