// Reading the loudness ffmpeg reports on stderr: loudnorm's JSON block (pass 1's measurement, pass 2's
// result) and the ebur128 meter's closing summary. The loudness pipeline and the output measurement both
// read them, so they live apart from either.
import type { LoudnessMeasurement } from './loudness-args';

export interface LoudnessReport {
  integratedLufs: number;
  truePeakDbtp: number;
  lra: number;
}

/** Reads the summary ffmpeg's ebur128 filter prints at the end of a run. */
export function parseEbur128Summary(stderrLines: string[]): LoudnessReport | null {
  const text = stderrLines.join('\n');
  const summary = text.slice(text.lastIndexOf('Summary:'));
  const integrated = /I:\s+(-?[\d.]+|-inf) LUFS/.exec(summary);
  if (text.lastIndexOf('Summary:') < 0 || !integrated) return null;
  const lra = /LRA:\s+(-?[\d.]+) LU/.exec(summary);
  const peak = /Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary);
  return {
    integratedLufs: Number(integrated[1]),
    truePeakDbtp: peak ? Number(peak[1]) : NaN,
    lra: lra ? Number(lra[1]) : NaN,
  };
}

export interface LoudnormReport extends LoudnessMeasurement {
  outputI: number;
  outputTp: number;
  outputLra: number;
  normalizationType: string;
}

/** Reads the last JSON block loudnorm printed (print_format=json) from ffmpeg's stderr lines. */
export function parseLoudnormReport(stderrLines: string[]): LoudnormReport | null {
  const text = stderrLines.join('\n');
  const blocks = text.match(/\{[^{}]*"input_i"[^{}]*\}/g);
  if (!blocks) return null;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(blocks[blocks.length - 1]) as Record<string, unknown>;
  } catch {
    return null;
  }
  const num = (key: string): number => (typeof json[key] === 'string' ? Number(json[key]) : NaN);
  return {
    inputI: num('input_i'),
    inputTp: num('input_tp'),
    inputLra: num('input_lra'),
    inputThresh: num('input_thresh'),
    targetOffset: num('target_offset'),
    outputI: num('output_i'),
    outputTp: num('output_tp'),
    outputLra: num('output_lra'),
    normalizationType: typeof json.normalization_type === 'string' ? json.normalization_type : 'unknown',
  };
}
