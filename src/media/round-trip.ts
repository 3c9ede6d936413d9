// The round trip of an sdr2hdr output, as filter-graph text: the output taken back to the source's SDR
// with the inverse of its mapping, and the source's frames it is compared with, on frames sampled
// evenly by index. One owner for both places that run it: the output check reading the file
// (output-measure.ts roundTripSsim) and the PQ pipeline's light pass, which decodes the written file
// anyway (hdr-pipeline.ts), with the source's sampled frames kept by the encode that decoded them.
import { writeFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { filterPath, zscaleColour } from './hdr-args';
import { buildExpandInverseCube } from './hdr-inverse';
import { REFERENCE_WHITE_NITS, usesMappingLut, type MappingChoice } from './hdr-mapping';
import type { ProbeResult, VideoStreamInfo } from './media.types';

export type SourceColour = Pick<VideoStreamInfo, 'colorTransfer' | 'colorPrimaries' | 'colorSpace' | 'colorRange'>;
export type RoundTripChoice = MappingChoice & { mapping: 'reference' | 'expand' };

/** Every how many frames one is compared, for `samples` frames spread over `frames`. */
export function sampleEvery(frames: number, samples: number): number {
  return Math.max(1, Math.floor(frames / Math.max(1, samples)));
}

/**
 * Every how many frames a run samples before its output exists: of the frames the source declares (its
 * duration × rate). The check samples the output's counted frames, and counts the run's measurement only
 * when both agree (output-checks.ts).
 */
export function declaredSampleEvery(probe: Pick<ProbeResult, 'durationSeconds' | 'video'>, samples: number): number {
  return sampleEvery(Math.round(probe.durationSeconds * (probe.video?.fps ?? 25)), samples);
}

/**
 * The sampled frames, picked by their index (then numbered alike on both sides when `renumber`): ssim pairs
 * frames by timestamp, and a joined output's timestamps need not match the source parts' (edit lists,
 * B-frame delay).
 */
export function pickFrames(every: number, renumber = true): string {
  return `select='not(mod(n\\,${every}))'${renumber ? ',setpts=N/(10*TB)' : ''}`;
}

/** Where the inverse LUT of a LUT-made output goes (null: `reference` with PQ, which zscale inverts). */
export function inverseLutPath(output: string, choice: RoundTripChoice): string | null {
  return usesMappingLut(choice) ? `${output}.inverse.cube` : null;
}

export async function writeInverseLut(path: string, choice: RoundTripChoice, colour: SourceColour): Promise<void> {
  const cube = buildExpandInverseCube({
    choice,
    sourcePrimaries: colour.colorPrimaries,
    sourceTransfer: colour.colorTransfer,
  });
  await writeFile(path, cube);
}

/** The output's decoded picture back to the source's SDR Y'CbCr (yuv420p). */
export function backToSdr(choice: RoundTripChoice, colour: SourceColour, lut: string | null): string {
  const { tin, pin, min } = zscaleColour(colour);
  const t = choice.transfer === 'pq' ? 'smpte2084' : 'arib-std-b67';
  const back = lut
    ? [
        `zscale=tin=${t}:t=${t}:pin=bt2020:p=bt2020:min=bt2020nc:m=gbr:rin=tv:r=pc`,
        'format=gbrp16le',
        `lut3d=file=${filterPath(lut)}:interp=tetrahedral`,
        `zscale=tin=${tin}:t=${tin}:pin=${pin}:p=${pin}:min=gbr:m=${min}:rin=pc:r=tv`,
      ].join(',')
    : `zscale=tin=${t}:pin=bt2020:min=bt2020nc:rin=tv:t=${tin}:p=${pin}:m=${min}:r=tv:npl=${REFERENCE_WHITE_NITS}`;
  return `${back},format=yuv420p`;
}

/** The source's picture as compared: scaled to the output's size (when it differs), yuv420p. */
export function sourceAsCompared(
  source: { width: number; height: number },
  output: { width: number; height: number },
): string {
  const resize = output.width !== source.width || output.height !== source.height;
  return [...(resize ? [`zscale=w=${output.width}:h=${output.height}`] : []), 'format=yuv420p'].join(',');
}

/** The ssim filter's summary (luma), rounded to 4 places; null when it printed none. */
export function parseSsimY(stderrLines: string[]): number | null {
  const match = /SSIM Y:([\d.]+)/.exec(stderrLines.join('\n'));
  return match ? Math.round(Number(match[1]) * 10000) / 10000 : null;
}

/**
 * A second output for the encode: the source's frames the round trip compares (every `every`-th decoded
 * frame, as compared), raw yuv420p in `path`. The encode decodes the source anyway; ffmpeg feeds one
 * decode to both outputs, so the check needs no second decode of the source.
 */
export function referenceOutputArgs(
  streamIndex: number,
  every: number,
  source: { width: number; height: number },
  output: { width: number; height: number },
  path: string,
): string[] {
  if (!isAbsolute(path)) throw new Error(`media output must be an absolute path: ${path}`);
  return ['-map', `0:${streamIndex}`, '-vf', `${pickFrames(every, false)},${sourceAsCompared(source, output)}`].concat([
    '-fps_mode',
    'passthrough',
    '-c:v',
    'rawvideo',
    '-f',
    'rawvideo',
    path,
  ]);
}

/** The reference frames kept by the encode, as an input of the light pass (numbered as pickFrames does). */
export function referenceInputArgs(path: string, size: { width: number; height: number }): string[] {
  if (!isAbsolute(path)) throw new Error(`media path must be absolute: ${path}`);
  return ['-protocol_whitelist', 'file', '-format_whitelist', 'rawvideo', '-f', 'rawvideo'].concat([
    '-pix_fmt',
    'yuv420p',
    '-video_size',
    `${size.width}x${size.height}`,
    '-framerate',
    '10',
    '-i',
    path,
  ]);
}
