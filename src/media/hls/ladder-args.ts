// The argv of one ffmpeg run that makes a whole package: the source decoded once, its picture split to
// every rung (the HDR rungs through the MP4 path's own colour step and x265 settings, hdr-args.ts; the SDR
// rungs scaled from the source itself; AV1 rungs through SVT-AV1 10-bit), the audio encoded once, and each
// rendition cut by ffmpeg's hls muxer into CMAF (fMP4) segments in its own folder. Every encoder gets the
// same fixed GOP of at most a second that divides the segment (keyframeInterval; no scene-cut keyframes), so
// every rung's segments start on the same frames and a player can switch at any boundary. Pure, no I/O.
import { join } from 'node:path';
import { buildHdrFilter, buildX265Params, MASTER_DISPLAY, TRANSFER_TAGS, zscaleColour } from '../hdr-args';
import { commonHead, inputArgs, outputPath } from '../ffmpeg-input';
import type { Mapping, Transfer } from '../hdr-mapping';
import type { ProbeResult, VideoStreamInfo } from '../media.types';
import type { X265Preset } from '../encoder-settings';
import type { LadderSpec, RungSpec } from '../output-spec';
import { segmentFrames } from '../segment-plan';
import { AUDIO_FOLDER, INIT_SEGMENT, MEDIA_PLAYLIST, renditionFolder, SEGMENT_PATTERN } from './rendition-names';

/** Capped VBR: the encoder aims at the rung's bitrate, its VBV allows peaks to 1.5× (Apple: ≤ 2× for VOD). */
const PEAK_SHARE = 1.5;
const BUFFER_SHARE = 2;
/** x264 preset of the SDR rungs: the speed x265's `medium`-class presets are paired with in ladders. */
const X264_PRESET = 'medium';
/** SVT-AV1 preset (0 slowest … 13 fastest): 8 is its live/VOD middle ground. */
const SVT_AV1_PRESET = '8';

export interface LadderArgsInput {
  input: string;
  probe: ProbeResult;
  rungs: RungSpec[];
  ladder: LadderSpec;
  /** The HDR rungs' colour step and signalling, as the job ordered (the same choice the MP4 path takes). */
  hdr: { mapping: Mapping; transfer: Transfer; peakNits: number; preset: X265Preset };
  /** The mapping LUT (hdr-mapping.ts buildExpandCube) when the mapping needs one, written by the caller. */
  lutPath?: string;
  /** The package's folder (absolute); each rendition writes into its own sub-folder. */
  dir: string;
  confinedCpus?: number;
  rwTimeoutUs?: number;
  /**
   * A unit of a split package (package-parts.ts): only this time range of the source is decoded (an exact
   * seek: ffmpeg decodes from the keyframe before and drops what precedes `startSeconds`), and each rung is
   * written whole as `<partsDir>/<folder>.mp4`, without audio, for the join to package. No duration: to the end.
   */
  part?: { startSeconds: number; durationSeconds: number | null; partsDir: string };
}

/**
 * Frames per GOP: the longest that divides the segment (so the hls muxer still cuts every rung on the same
 * frames) and lasts at most a second. Not the whole segment: when a player changes rendition at once
 * (hls.js's `currentLevel`, a quality menu) it removes the buffered video under the playhead, and Chromium
 * resumes decoding only at the next keyframe after what it last showed — with one keyframe per 4 s segment
 * the picture froze up to 4 s while the audio played on (test/dashboard/package-player.e2e-spec.ts).
 */
export function gopFrames(segmentSeconds: number, fps: number | null): number {
  const segment = segmentFrames(segmentSeconds, fps);
  const second = Math.max(1, Math.round(fps ?? 25));
  for (let frames = Math.min(second, segment); frames > 1; frames--) if (segment % frames === 0) return frames;
  return 1;
}

export function buildLadderArgs(options: LadderArgsInput): string[] {
  const { probe, rungs, ladder, dir } = options;
  const video = probe.video;
  if (!video) throw new Error('buildLadderArgs: the probe has no video stream');
  if (rungs.length === 0) throw new Error('buildLadderArgs: a package needs at least one rung');
  outputPath(dir);
  const gop = gopFrames(ladder.segmentSeconds, video.fps);
  // A unit's first frame lies up to half a frame after its seek point: its timestamps start at 0 again, so
  // the join's concat lays the units end to end without a gap (package-parts.ts).
  const restart = options.part ? 'setpts=PTS-STARTPTS,' : '';
  const split = `[0:${video.index}]${restart}split=${rungs.length}${rungs.map((_, i) => `[s${i}]`).join('')}`;
  const chains = rungs.map((rung, i) => `[s${i}]${rungFilter(rung, video, options)}[v${i}]`);
  const part = options.part;
  return [
    ...commonHead('error'),
    ...(part ? ['-ss', part.startSeconds.toFixed(6)] : []),
    ...(part?.durationSeconds ? ['-t', part.durationSeconds.toFixed(6)] : []),
    ...inputArgs(options.input, options.rwTimeoutUs),
    '-filter_complex',
    [split, ...chains].join(';'),
    ...rungs.flatMap((rung, i) => [
      '-map',
      `[v${i}]`,
      ...rungEncoderArgs(rung, gop, options),
      '-an',
      ...(part
        ? ['-f', 'mp4', outputPath(join(part.partsDir, `${renditionFolder(rung)}.mp4`))]
        : hlsArgs(join(dir, renditionFolder(rung)), ladder.segmentSeconds)),
    ]),
    ...(probe.audio && !part ? audioRenditionArgs(`0:${probe.audio.index}`, ladder, dir) : []),
  ];
}

/** The package's one audio rendition: the source's audio stream `stream` encoded to stereo AAC, packaged. */
export function audioRenditionArgs(stream: string, ladder: LadderSpec, dir: string): string[] {
  return [
    '-map',
    stream,
    '-vn',
    '-c:a',
    'aac',
    '-b:a',
    `${ladder.audioKbps}k`,
    '-ac',
    '2',
    ...hlsArgs(join(dir, AUDIO_FOLDER), ladder.segmentSeconds),
  ];
}

/** The picture of one rung: HDR rungs through the MP4 path's filter, SDR rungs the source scaled, BT.709. */
function rungFilter(rung: RungSpec, video: VideoStreamInfo, options: LadderArgsInput): string {
  const lines = Math.min(rung.width, rung.height);
  if (rung.range !== 'SDR') {
    const { mapping, transfer } = options.hdr;
    return buildHdrFilter(video, lines, { mapping, transfer, lutPath: options.lutPath });
  }
  const { tin, pin, min, rin } = zscaleColour(video);
  const resize = rung.width !== video.width || rung.height !== video.height;
  const parts = [
    ...(resize ? [`w=${rung.width}`, `h=${rung.height}`] : []),
    `tin=${tin}`,
    't=bt709',
    `pin=${pin}`,
    'p=bt709',
    `min=${min}`,
    'm=bt709',
    `rin=${rin}`,
    'r=tv',
  ];
  return `zscale=${parts.join(':')},format=yuv420p`;
}

function rungEncoderArgs(rung: RungSpec, gop: number, options: LadderArgsInput): string[] {
  const rate = [
    '-b:v',
    `${rung.bitrateKbps}k`,
    '-maxrate',
    `${Math.round(rung.bitrateKbps * PEAK_SHARE)}k`,
    '-bufsize',
    `${Math.round(rung.bitrateKbps * BUFFER_SHARE)}k`,
  ];
  switch (rung.codec) {
    case 'hevc': {
      const { transfer, peakNits, mapping, preset } = options.hdr;
      const x265 = buildX265Params({ transfer, peakNits, mapping }, options.confinedCpus);
      return [
        '-c:v',
        'libx265',
        '-preset',
        preset,
        ...rate,
        '-profile:v',
        'main10',
        '-pix_fmt',
        'yuv420p10le',
        '-tag:v',
        'hvc1',
        ...hdrColourTags(transfer),
        '-x265-params',
        `${x265}:keyint=${gop}:min-keyint=${gop}:scenecut=0:open-gop=0`,
      ];
    }
    case 'av1':
      return [
        '-c:v',
        'libsvtav1',
        '-preset',
        SVT_AV1_PRESET,
        ...rate,
        '-pix_fmt',
        'yuv420p10le',
        '-g',
        String(gop),
        ...hdrColourTags(options.hdr.transfer),
        '-svtav1-params',
        ['scd=0', ...svtAv1HdrParams(options.hdr.transfer, options.hdr.peakNits)].join(':'),
      ];
    case 'h264':
      return [
        '-c:v',
        'libx264',
        '-preset',
        X264_PRESET,
        ...rate,
        '-profile:v',
        'high',
        '-pix_fmt',
        'yuv420p',
        '-color_primaries',
        'bt709',
        '-color_trc',
        'bt709',
        '-colorspace',
        'bt709',
        '-color_range',
        'tv',
        // 8x8dct makes x264 signal High (without it a stream may say Main); no keyframe but the GOP's.
        '-x264-params',
        `8x8dct=1:keyint=${gop}:scenecut=0:open-gop=0`,
      ];
  }
}

/**
 * SVT-AV1's HDR10 metadata OBUs (Debian 12's ffmpeg links SVT-AV1 1.4.1; its `mastering-display` takes
 * chromaticities as decimals and luminance in cd/m², its `content-light` MaxCLL,MaxFALL): the ST 2086
 * display the HEVC rungs declare, and the mastering peak as the content light bound — the picture does not
 * exist yet; package-ladder.ts rewrites the levels with the rung's measured ones (av1-light.ts). HLG carries
 * neither (scene-referred), only the colour description.
 */
export function svtAv1HdrParams(transfer: Transfer, peakNits: number): string[] {
  if (transfer !== 'pq') return [];
  // ST 2086 units of 0.00002 (chromaticity) and 0.0001 cd/m² (MASTER_DISPLAY) to SVT-AV1's decimals.
  const xy = (values: readonly number[], i: number) => `(${values[i] / 50000},${values[i + 1] / 50000})`;
  const [g, b, r] = [0, 2, 4].map((i) => xy(MASTER_DISPLAY.primaries, i));
  const display = `G${g}B${b}R${r}WP${xy(MASTER_DISPLAY.whitePoint, 0)}L(${peakNits},${MASTER_DISPLAY.minLuminance / 10000})`;
  return [`mastering-display=${display}`, `content-light=${peakNits},${peakNits}`];
}

function hdrColourTags(transfer: Transfer): string[] {
  return [
    '-color_primaries',
    'bt2020',
    '-color_trc',
    TRANSFER_TAGS[transfer],
    '-colorspace',
    'bt2020nc',
    '-color_range',
    'tv',
  ];
}

/**
 * CMAF segments of `seconds` in `folder`, a VOD playlist beside them; starts kept as decoded (without
 * `-avoid_negative_ts disabled` B-frames shift the first segment by about 80 ms).
 */
export function hlsArgs(folder: string, seconds: number): string[] {
  return [
    '-avoid_negative_ts',
    'disabled',
    '-f',
    'hls',
    '-hls_segment_type',
    'fmp4',
    '-hls_time',
    String(seconds),
    '-hls_playlist_type',
    'vod',
    '-hls_flags',
    'independent_segments',
    '-hls_fmp4_init_filename',
    INIT_SEGMENT,
    '-hls_segment_filename',
    join(folder, SEGMENT_PATTERN),
    join(folder, MEDIA_PLAYLIST),
  ];
}
