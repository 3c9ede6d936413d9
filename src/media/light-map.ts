// The light map of an sdr2hdr item: one frame of the source beside the same frame of the output drawn as a
// false-colour luminance map (cd/m² bands, as colourists' HDR false-colour tools show), with its legend —
// how to see, on an SDR screen, where the light went. The colouring is a generated 3D LUT (output R′G′B′ →
// band colour), applied by ffmpeg's lut3d; drawbox/drawtext draw the legend.
import { rm, writeFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { ALLOWED_DEMUXERS } from './ffmpeg-input';
import { zscaleColour } from './hdr-args';
import {
  bt2020Luminance,
  hlgInverseOetf,
  hlgSceneToDisplayLight,
  pqDecode,
  type Rgb,
  type Transfer,
} from './hdr-mapping';
import type { VideoStreamInfo } from './media.types';
import { defaultFfmpegPath, defaultFfprobePath, runMediaProcess, type MediaProcessResult } from './run-ffmpeg';

/** The source's colour tags as its probe read them (null: untagged). */
export type SourceColour = Pick<VideoStreamInfo, 'colorTransfer' | 'colorPrimaries' | 'colorSpace' | 'colorRange'>;

/** Upper edges (cd/m²) and colours of the bands; edges sit between the levels the mappings aim at. */
export const LIGHT_BANDS: { below: number; colour: string; label: string }[] = [
  { below: 1, colour: '08306b', label: '<1' },
  { below: 10, colour: '2171b5', label: '1-10' },
  { below: 50, colour: '41ab5d', label: '10-50' },
  { below: 150, colour: 'a1d99b', label: '50-150' },
  { below: 400, colour: 'bdbdbd', label: '150-400' },
  { below: 800, colour: 'fee391', label: '400-800' },
  { below: 1500, colour: 'fe9929', label: '800-1500' },
  { below: 3000, colour: 'e31a1c', label: '1500-3000' },
  { below: Infinity, colour: 'ff66ff', label: '3000+' },
];

export function bandOf(nits: number): (typeof LIGHT_BANDS)[number] {
  return LIGHT_BANDS.find((band) => nits < band.below) ?? LIGHT_BANDS[LIGHT_BANDS.length - 1];
}

const cubes = new Map<Transfer, Promise<string>>();

/** The cube of `transfer`, computed once per process. */
export function falseColourCube(transfer: Transfer): Promise<string> {
  let cube = cubes.get(transfer);
  if (cube === undefined) {
    cube = buildFalseColourCube(transfer);
    cubes.set(transfer, cube);
  }
  return cube;
}

/**
 * output R′G′B′ (BT.2020, PQ or HLG, full range) → the band colour of its luminance, as a `.cube`.
 *
 * It runs on the worker's event loop. Written point by point (each channel decoded, a colour parsed and
 * three numbers formatted for each of 65³ points, in one go) it blocked the loop for ~1–2 s on an idle
 * core and up to 9 s on a loaded one: heartbeats, lock renewals and — in the test process, which also
 * holds the API — requests waited behind it. Each channel's 65 levels are now decoded once (HLG's OOTF,
 * which needs all three, is what remains per point), each band's line formatted once, and the loop
 * yields after every plane of the cube (one `b`), ~3 ms at most. Same cube, point for point.
 */
export async function buildFalseColourCube(transfer: Transfer, size = 65): Promise<string> {
  const levels = Array.from({ length: size }, (_, i) => i / (size - 1));
  const channelLight = levels.map(transfer === 'pq' ? pqDecode : hlgInverseOetf);
  const lineOf = new Map(LIGHT_BANDS.map((band) => [band, cubeLine(band.colour)]));
  const lines = [`TITLE "mediajobs light map (${transfer})"`, `LUT_3D_SIZE ${size}`];
  for (let b = 0; b < size; b++) {
    for (let g = 0; g < size; g++) {
      for (let r = 0; r < size; r++) {
        const channels: Rgb = [channelLight[r], channelLight[g], channelLight[b]];
        const light = transfer === 'pq' ? channels : hlgSceneToDisplayLight(channels);
        lines.push(lineOf.get(bandOf(bt2020Luminance(light)))!);
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return `${lines.join('\n')}\n`;
}

/** A colour `rrggbb` as a `.cube` line: three numbers 0..1. */
function cubeLine(hex: string): string {
  return [0, 2, 4].map((at) => (parseInt(hex.slice(at, at + 2), 16) / 255).toFixed(4)).join(' ');
}

export const LEGEND_HEIGHT = 56;
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

export interface LightMapArgsInput {
  source: string;
  output: string;
  png: string;
  /** The frame shown (seconds from the start). */
  atSeconds: number;
  /**
   * `atSeconds` is a keyframe of the output: the frame just after it is shown, decoded from that
   * keyframe (a few HEVC frames instead of up to a GOP), and the source frame of the same time beside it.
   */
  keyframe?: boolean;
  /** The output's picture size; the source frame is scaled to it. */
  width: number;
  height: number;
  cubePath: string;
  /** The source's tags: an untagged source is read as BT.709/limited, as the encode reads it. */
  sourceColour: SourceColour;
}

/** ffmpeg: both frames at `atSeconds`, the output false-coloured, side by side over the legend, one PNG. */
export function buildLightMapArgs(input: LightMapArgsInput): string[] {
  for (const path of [input.source, input.output, input.png, input.cubePath]) {
    if (!isAbsolute(path)) throw new Error(`light map paths must be absolute: ${path}`);
  }
  if (!/^[A-Za-z0-9_./+-]+$/.test(input.cubePath)) throw new Error(`LUT path must be plain: ${input.cubePath}`);
  const { width, height } = input;
  const bandWidth = Math.floor((2 * width - 20) / LIGHT_BANDS.length);
  // The longest label ("1500-3000") must fit its band on a small picture too (DejaVu ≈ 0.6 em a digit).
  const fontSize = Math.max(7, Math.min(12, Math.floor((bandWidth - 4) / 5.6)));
  const legend = LIGHT_BANDS.flatMap((band, i) => {
    const x = 10 + i * bandWidth;
    return [
      `drawbox=x=${x}:y=${height + 6}:w=${bandWidth - 4}:h=18:color=0x${band.colour}@1:t=fill`,
      `drawtext=fontfile=${FONT}:text='${band.label}':x=${x}:y=${height + 30}:fontsize=${fontSize}:fontcolor=black`,
    ];
  });
  const title = `drawtext=fontfile=${FONT}:text='cd/m²':x=${2 * width - 50}:y=${height + 42}:fontsize=11:fontcolor=black`;
  // Just after a keyframe's time, both seeks land on that keyframe (ffmpeg seeks to the keyframe at or
  // before the time) and both show the frame after it: the same frame, decoding a few frames at most
  // (a seek just before it would land on the keyframe before, a GOP earlier).
  const at = (input.atSeconds + (input.keyframe ? 0.0005 : 0)).toFixed(4);
  const sourceSeek = ['-ss', at];
  const outputSeek = ['-ss', at];
  const local = ['-protocol_whitelist', 'file', '-format_whitelist', ALLOWED_DEMUXERS];
  // zscale finds no path from a frame without colour tags: name the source's (as the encode does), and
  // keep its transfer and primaries on the way out (only the matrix and range change, to full-range RGB).
  const { tin, pin, min, rin } = zscaleColour(input.sourceColour);
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    ...sourceSeek,
    ...local,
    '-i',
    input.source,
    ...outputSeek,
    ...local,
    '-i',
    input.output,
    '-filter_complex',
    [
      `[0:v]zscale=tin=${tin}:pin=${pin}:min=${min}:rin=${rin}:t=${tin}:p=${pin}:w=${width}:h=${height}:m=gbr:r=pc,format=gbrp,format=rgb24[sdr]`,
      `[1:v]zscale=m=gbr:r=pc,format=gbrp16le,lut3d=file=${input.cubePath}:interp=nearest,format=rgb24[map]`,
      `[sdr][map]hstack=inputs=2,pad=iw:ih+${LEGEND_HEIGHT}:0:0:color=white,${[...legend, title].join(',')}[out]`,
    ].join(';'),
    '-map',
    '[out]',
    '-frames:v',
    '1',
    input.png,
  ];
}

export interface RenderLightMapInput {
  source: string;
  output: string;
  png: string;
  transfer: Transfer;
  width: number;
  height: number;
  durationSeconds: number;
  sourceColour: SourceColour;
  ffmpegPath?: string;
  ffprobePath?: string;
  signal?: AbortSignal;
  timeLimitMs?: number;
}

/** Packets read after the seek when looking for the keyframe nearest the middle (no decoding). */
const KEYFRAME_SCAN_PACKETS = 600;

/**
 * The output's keyframe nearest `seconds`: ffprobe seeks there (landing on the keyframe at or before it)
 * and reads packet flags only. Decoding from a keyframe to the exact middle cost more than the rest of
 * the map together (9 s of a 10 s 1080p item's 250-frame GOP on a loaded machine). Null when none is read.
 */
export async function keyframeNear(
  path: string,
  seconds: number,
  tools: { ffprobePath?: string; signal?: AbortSignal; timeLimitMs?: number } = {},
): Promise<number | null> {
  let csv = '';
  const run = await runMediaProcess(
    tools.ffprobePath ?? defaultFfprobePath(),
    [
      '-v',
      'error',
      // Our own output, read by the same rule as every input: local files, the demuxers we accept.
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      ALLOWED_DEMUXERS,
      '-read_intervals',
      `${seconds.toFixed(3)}%+#${KEYFRAME_SCAN_PACKETS}`,
      '-select_streams',
      'v:0',
      '-show_entries',
      'packet=pts_time,flags',
      '-of',
      'csv=p=0',
      path,
    ],
    { signal: tools.signal, timeLimitMs: tools.timeLimitMs, onStdout: (chunk) => void (csv += chunk.toString('utf8')) },
  );
  if (run.status !== 'succeeded') return null;
  const keyframes = csv
    .split('\n')
    .map((line) => line.split(','))
    .filter(([time, flags]) => flags?.startsWith('K') && Number.isFinite(Number(time)))
    .map(([time]) => Number(time));
  if (!keyframes.length) return null;
  return keyframes.reduce((best, time) => (Math.abs(time - seconds) < Math.abs(best - seconds) ? time : best));
}

/**
 * Writes the light map PNG of the frame after the output's keyframe nearest the middle of the item (or
 * of the exact middle, see below); the run's outcome.
 */
export async function renderLightMap(input: RenderLightMapInput): Promise<MediaProcessResult> {
  const cubePath = `${input.png}.false-colour.cube`;
  try {
    const middle = Math.max(0, input.durationSeconds / 2);
    const nearest = await keyframeNear(input.output, middle, input);
    // A keyframe near the start or the end (fade-ins, leaders, a short item's only keyframe at 0) is not
    // a representative frame: then the exact middle, decoded from the keyframe before it.
    const inside = (time: number) => time >= 0.1 * input.durationSeconds && time <= 0.9 * input.durationSeconds;
    const keyframe = nearest !== null && inside(nearest) ? nearest : null;
    await writeFile(cubePath, await falseColourCube(input.transfer));
    const args = buildLightMapArgs({
      ...input,
      cubePath,
      atSeconds: keyframe ?? middle,
      keyframe: keyframe !== null,
    });
    return await runMediaProcess(input.ffmpegPath ?? defaultFfmpegPath(), args, {
      signal: input.signal,
      timeLimitMs: input.timeLimitMs,
    });
  } finally {
    await rm(cubePath, { force: true });
  }
}
