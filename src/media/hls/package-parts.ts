// A long package item in units (SEGMENT_SECONDS), each taken by any worker: a unit decodes its time range
// of the source once and encodes every rung of it (ladder-args.ts `part`), one MP4 per rung; the join
// packages each rung from its parts by stream copy (the concat demuxer into the hls muxer, no re-encode),
// encodes the audio once from the source, and reads the package back as a one-pass package is
// (package-ladder.ts finishPackage: bandwidths, CODECS, light levels over the whole rung, HDR10 boxes).
//
// Units are cut by frames, not at the source's keyframes: a unit is a whole number of HLS segments (at most
// SEGMENT_SECONDS, at least one), so every unit starts on a segment boundary, every encoder starts a GOP there, and the
// joined rung has its keyframes — and the hls muxer its cuts — on exactly the frames of a one-pass encode.
// A unit's range is decoded with an exact seek (ffmpeg decodes from the keyframe before and drops the
// frames before the start), so the source needs no keyframe at the cut.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { commonHead, inputArgs } from '../ffmpeg-input';
import { failure, processFailure, type PipelineFailure } from '../pipelines';
import { runFfmpeg } from '../run-ffmpeg';
import { partWindow, type PlannedSegment } from '../segment-plan';
import { concatInput, concatList } from '../segments';
import { audioRenditionArgs, hlsArgs } from './ladder-args';
import { encodeLadder, finishPackage, type LadderRequest, type LadderSuccess } from './package-ladder';
import { AUDIO_FOLDER, renditionFolder } from './rendition-names';

export interface PartRequest extends Omit<LadderRequest, 'dir' | 'part'> {
  unit: PlannedSegment;
  last: boolean;
  /** An empty folder: each rung is written there as `<folder>.mp4`. */
  partsDir: string;
}

/** One unit: its range decoded once, every rung encoded; the rungs' files by folder name. */
export async function encodePackagePart(
  request: PartRequest,
): Promise<{ ok: true; files: Record<string, string>; seconds: number } | PipelineFailure> {
  const started = Date.now();
  const window = partWindow(request.unit, request.probe.video?.fps ?? null, request.last);
  const encoded = await encodeLadder(
    { ...request, dir: request.partsDir, part: { ...window, partsDir: request.partsDir } },
    started,
  );
  if (!encoded.ok) return encoded;
  const files = Object.fromEntries(
    request.rungs.map((rung) => [renditionFolder(rung), join(request.partsDir, `${renditionFolder(rung)}.mp4`)]),
  );
  return { ok: true, files, seconds: request.unit.duration };
}

export interface JoinPackageRequest extends Omit<LadderRequest, 'part'> {
  /** Each unit's folder of rung files (encodePackagePart's partsDir), in order. */
  unitDirs: string[];
}

/** The rungs packaged from their units' parts and the audio from the source, then read back (finishPackage). */
export async function joinPackageParts(request: JoinPackageRequest): Promise<LadderSuccess | PipelineFailure> {
  const started = Date.now();
  try {
    await mkdir(request.scratchDir, { recursive: true });
    const lists: string[] = [];
    for (const rung of request.rungs) {
      const folder = renditionFolder(rung);
      const list = join(request.scratchDir, `${folder}.parts.txt`);
      await writeFile(list, concatList(request.unitDirs.map((dir) => join(dir, `${folder}.mp4`))));
      lists.push(list);
    }
    for (const folder of [...request.rungs.map(renditionFolder), ...(request.probe.audio ? [AUDIO_FOLDER] : [])])
      await mkdir(join(request.dir, folder), { recursive: true });
    const args = buildPackageJoinArgs({ ...request, lists });
    const run = await runFfmpeg(args, {
      ffmpegPath: request.ffmpegPath,
      durationSeconds: request.probe.durationSeconds,
      signal: request.signal,
      timeLimitMs: request.timeLimitMs,
    });
    if (run.status !== 'succeeded') return processFailure(run, started);
    return await finishPackage(request, args, started);
  } catch (error) {
    return failure('processing_failed', 'Processing failed.', [String(error)], started);
  }
}

/**
 * One ffmpeg run: each rung's parts through the concat demuxer (our own list of our own files: local files
 * only), stream-copied into its rendition folder by the same hls muxer settings as one pass; the source's
 * audio encoded once as in one pass.
 */
export function buildPackageJoinArgs(options: {
  input: string;
  probe: LadderRequest['probe'];
  rungs: LadderRequest['rungs'];
  ladder: LadderRequest['ladder'];
  dir: string;
  lists: string[];
}): string[] {
  const { rungs, lists, ladder, dir, probe } = options;
  return [
    ...commonHead('error'),
    ...lists.flatMap(concatInput),
    ...(probe.audio ? inputArgs(options.input) : []),
    ...rungs.flatMap((rung, i) => [
      '-map',
      `${i}:v:0`,
      '-c:v',
      'copy',
      ...(rung.codec === 'hevc' ? ['-tag:v', 'hvc1'] : []),
      '-an',
      ...hlsArgs(join(dir, renditionFolder(rung)), ladder.segmentSeconds),
    ]),
    ...(probe.audio ? audioRenditionArgs(`${lists.length}:${probe.audio.index}`, ladder, dir) : []),
  ];
}
