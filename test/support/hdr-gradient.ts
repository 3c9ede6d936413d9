// Contours on the highlight gradient (test/fixtures/hdr-scenes.ts HIGHLIGHT_GRADIENT) after an HDR mapping,
// read from the coded 10-bit luma of the output (hdr-decode.ts readCodedFrames: no conversion by ffmpeg).
// A contour is a jump: where the picture's level changes from one column to the next by more than its
// neighbours do. Each column is the mean of its inner rows — what the eye integrates — so dither or
// debanding noise does not count as a jump, and a stepped picture does.
import { gradientCode, HIGHLIGHT_GRADIENT } from '../fixtures/hdr-scenes';
import { readCodedFrames } from './hdr-decode';

export interface GradientReading {
  /** The largest change of the column means between neighbouring columns, in 10-bit codes: the contour. */
  columnMaxJump: number;
  /** The 8-bit source code where that jump is. */
  jumpAtCode: number;
  /** The largest difference of the mean levels of adjacent 8-bit source codes (the curve's own step). */
  codeMaxStep: number;
  /** RMS of the pixels around their column's mean, 10-bit codes: the noise a debanding step leaves. */
  noiseRms: number;
}

/** The last frame of an output of the gradient. */
export async function readGradient(file: string): Promise<GradientReading> {
  const frames = await readCodedFrames(file);
  const { y, width, height } = frames[frames.length - 1];
  if (width !== HIGHLIGHT_GRADIENT.width || height !== HIGHLIGHT_GRADIENT.height)
    throw new Error(`${file}: ${width}×${height} is not the gradient's size`);
  const rows = { from: 40, to: height - 40 };
  const columns: number[] = [];
  for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let row = rows.from; row < rows.to; row++) sum += y[row * width + x];
    columns.push(sum / (rows.to - rows.from));
  }
  let squares = 0;
  for (let x = 0; x < width; x++)
    for (let row = rows.from; row < rows.to; row++) squares += (y[row * width + x] - columns[x]) ** 2;
  // The outermost columns are left out: the encoder's and the debanding's borders.
  let columnMaxJump = 0;
  let jumpAt = 0;
  for (let x = 9; x < width - 8; x++) {
    const jump = Math.abs(columns[x] - columns[x - 1]);
    if (jump > columnMaxJump) [columnMaxJump, jumpAt] = [jump, x];
  }
  const byCode = new Map<number, number[]>();
  for (let x = 1; x < width - 1; x++) {
    // Inner columns of a code only: its first and last lean on the neighbours through 4:2:0 and the encode.
    if (gradientCode(x - 1) !== gradientCode(x) || gradientCode(x + 1) !== gradientCode(x)) continue;
    byCode.set(gradientCode(x), [...(byCode.get(gradientCode(x)) ?? []), columns[x]]);
  }
  const means = [...byCode.keys()].sort((a, b) => a - b).map((code) => mean(byCode.get(code)!));
  return {
    columnMaxJump,
    jumpAtCode: gradientCode(jumpAt),
    codeMaxStep: Math.max(...means.slice(1).map((value, i) => value - means[i])),
    noiseRms: Math.sqrt(squares / (width * (rows.to - rows.from))),
  };
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
