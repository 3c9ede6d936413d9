// The HLS package pipeline: one ffmpeg run encodes every rung and the audio into CMAF segments
// (ladder-args.ts), then each rendition is read back — its playlist for the bandwidths and boundaries, its
// init segment for CODECS — and every PQ rung's picture is measured and its light levels written where
// players read them, as the MP4 path does (light-levels.ts, hdr-metadata.ts): HEVC's `clli`/`mdcv` in the
// init segment and CLL SEI in every segment; AV1's CLL metadata OBU in every segment (av1-light.ts).
// Last, our master playlist. Answers a verdict, never throws for media or process outcomes (as pipelines.ts).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildExpandCube, usesMappingLut } from '../hdr-mapping';
import { levelsToWrite, writeHdrMetadata, writeSegmentLightLevels } from '../hdr-metadata';
import { measureLightLevels, type LightPassRoundTrip } from '../light-levels';
import { ROUND_TRIP_SAMPLES, type RoundTripInRun } from '../output-checks';
import {
  backToSdr,
  inverseLutPath,
  declaredSampleEvery,
  referenceOutputArgs,
  sourceAsCompared,
  writeInverseLut,
} from '../round-trip';
import type { RungSpec } from '../output-spec';
import {
  encodeCeiling,
  failure,
  processFailure,
  withinMasteringPeak,
  type PipelineFailure,
  type PipelineRunOptions,
} from '../pipelines';
import { runFfmpeg } from '../run-ffmpeg';
import { writeAv1SegmentLightLevels } from './av1-light';
import { codecsOfInitSegment } from './codecs-string';
import { concatFiles } from './concat-files';
import { buildLadderArgs, type LadderArgsInput } from './ladder-args';
import { buildMasterPlaylist } from './master-playlist';
import {
  averageBitrate,
  peakBitrate,
  readMediaPlaylist,
  segmentStarts,
  totalDuration,
  type MediaPlaylist,
} from './media-playlist';
import { AUDIO_FOLDER, MASTER_PLAYLIST, MEDIA_PLAYLIST, renditionFolder } from './rendition-names';

export interface LadderRequest extends PipelineRunOptions, Omit<LadderArgsInput, 'lutPath'> {
  /** A folder of the caller's beside `dir` for the rungs joined into one file each (measured, never stored). */
  scratchDir: string;
}

/** One rendition as made: what the master playlist says of it, and its picture in one file for the checks. */
export interface MadeRendition {
  rung: RungSpec;
  folder: string;
  codecs: string;
  /** Video alone (bit/s); the master's BANDWIDTH adds the audio's. */
  peakBitrate: number;
  averageBitrate: number;
  segments: number;
  durationSeconds: number;
  /** Where each segment starts (s): the same on every rung (checked: package-checks.ts). */
  starts: number[];
  /** Each segment's EXTINF (s), in order. */
  durations: number[];
  targetDuration: number;
  frameRate: number;
  /** PQ rungs: ST 2086 peak and the measured levels written; null for HLG and SDR rungs. */
  light: { masteringPeakNits: number; maxCll: number; maxFall: number } | null;
  /** init + segments as one fragmented MP4 (in scratchDir), for the output checks. */
  joinedPath: string;
  /**
   * PQ rungs: the round trip measured by the light pass, which decodes the joined rung anyway (against the
   * source's frames kept by a one-pass encode, or the source decoded in the same pass after a join); the
   * check counts it when it is its own measurement. Null otherwise.
   */
  roundTrip: RoundTripInRun | null;
}

export interface LadderSuccess {
  ok: true;
  dir: string;
  renditions: MadeRendition[];
  audio: { codecs: string; peakBitrate: number; averageBitrate: number; segments: number } | null;
  processedSeconds: number;
  wallMs: number;
  args: string[];
}

// Share of the progress bar: the encode, then measuring and writing the PQ rungs' light.
const ENCODE_WEIGHT = 0.85;

export async function packageLadder(request: LadderRequest): Promise<LadderSuccess | PipelineFailure> {
  const started = Date.now();
  const encoded = await encodeLadder(request, started);
  if (!encoded.ok) return encoded;
  try {
    return await finishPackage({ ...request, referencesKept: true }, encoded.args, started);
  } catch (error) {
    return failure('processing_failed', 'Processing failed.', [String(error)], started);
  }
}

/**
 * The one ffmpeg run of a ladder (ladder-args.ts): the whole package, or one unit of a split package's rungs
 * (`part`: package-parts.ts), with the mapping LUT written beside it for the run when the mapping needs one.
 */
export async function encodeLadder(
  request: LadderRequest,
  started: number,
): Promise<{ ok: true; args: string[] } | PipelineFailure> {
  const video = request.probe.video;
  if (!video) return failure('processing_failed', 'The input has no video stream.', [], started);
  if (request.probe.encrypted)
    return failure('drm_protected', 'The input is encrypted (DRM/CENC) and cannot be processed.', [], started);
  const { hdr, rungs, dir, part } = request;
  const hdrRungs = rungs.some((rung) => rung.range !== 'SDR');
  const lutPath = hdrRungs && usesMappingLut(hdr) ? join(request.scratchDir, 'mapping.cube') : undefined;
  try {
    await mkdir(request.scratchDir, { recursive: true });
    const folders = part
      ? [part.partsDir]
      : [...rungs.map(renditionFolder), ...(request.probe.audio ? [AUDIO_FOLDER] : [])].map((f) => join(dir, f));
    for (const folder of folders) await mkdir(folder, { recursive: true });
    if (lutPath) {
      const cube = buildExpandCube({
        choice: hdr,
        sourcePrimaries: video.colorPrimaries,
        sourceTransfer: video.colorTransfer,
      });
      await writeFile(lutPath, cube);
    }
    const args = buildLadderArgs({ ...request, lutPath });
    // One pass: the source's frames each PQ rung's round trip compares, kept from this decode (round-trip.ts).
    if (!part)
      for (const rung of rungs.filter((each) => each.range === 'PQ'))
        args.push(
          ...referenceOutputArgs(
            video.index,
            declaredSampleEvery(request.probe, ROUND_TRIP_SAMPLES),
            video,
            rung,
            referencePath(request, rung),
          ),
        );
    const seconds = part ? (part.durationSeconds ?? request.probe.durationSeconds - part.startSeconds) : null;
    const run = await runFfmpeg(args, {
      ffmpegPath: request.ffmpegPath,
      durationSeconds: seconds ?? request.probe.durationSeconds,
      maxOutSeconds: encodeCeiling(seconds ?? request.probe.durationSeconds),
      onProgress: (fraction) => request.onProgress?.(fraction * (part ? 1 : ENCODE_WEIGHT)),
      signal: request.signal,
      timeLimitMs: request.timeLimitMs,
    });
    if (run.status !== 'succeeded') return processFailure(run, started);
    return { ok: true, args };
  } catch (error) {
    return failure('processing_failed', 'Processing failed.', [String(error)], started);
  } finally {
    if (lutPath) await rm(lutPath, { force: true });
  }
}

/** What reading back a package's renditions needs: its folders, the rungs, and the tools' bounds. */
export type FinishRequest = Pick<
  LadderRequest,
  'input' | 'rungs' | 'dir' | 'scratchDir' | 'probe' | 'hdr' | 'ffmpegPath' | 'signal' | 'timeLimitMs' | 'onProgress'
> & {
  /** The encode kept each PQ rung's reference frames (one pass: encodeLadder); else the light pass decodes the source. */
  referencesKept?: boolean;
};

/** Where the encode keeps a PQ rung's reference frames (raw yuv420p at the rung's size). */
function referencePath(request: Pick<LadderRequest, 'scratchDir'>, rung: RungSpec): string {
  return join(request.scratchDir, `${renditionFolder(rung)}.reference.yuv`);
}

/**
 * The package's files are written (one run, or the join of a split package: package-parts.ts): each
 * rendition read back and its light written, the audio read, our master playlist written.
 */
export async function finishPackage(
  request: FinishRequest,
  args: string[],
  started: number,
): Promise<LadderSuccess | PipelineFailure> {
  const { rungs, dir } = request;
  const fps = request.probe.video?.fps ?? 25;
  const renditions: MadeRendition[] = [];
  for (const rung of rungs) {
    const made = await finishRendition(rung, fps, request, started);
    if (!made.ok) return made;
    renditions.push(made.rendition);
  }
  const audio = request.probe.audio ? await readAudio(dir) : null;
  await writeFile(
    join(dir, MASTER_PLAYLIST),
    buildMasterPlaylist(
      renditions.map((rendition) => ({
        folder: rendition.folder,
        bandwidth: rendition.peakBitrate + (audio?.peakBitrate ?? 0),
        averageBandwidth: rendition.averageBitrate + (audio?.averageBitrate ?? 0),
        codecs: rendition.codecs,
        width: rendition.rung.width,
        height: rendition.rung.height,
        frameRate: rendition.frameRate,
        videoRange: rendition.rung.range,
      })),
      audio && { codecs: audio.codecs, channels: 2 },
    ),
  );
  request.onProgress?.(1);
  return {
    ok: true,
    dir,
    renditions,
    audio,
    processedSeconds: Math.min(request.probe.durationSeconds, renditions[0].durationSeconds),
    wallMs: Date.now() - started,
    args,
  };
}

async function finishRendition(
  rung: RungSpec,
  frameRate: number,
  request: FinishRequest,
  started: number,
): Promise<{ ok: true; rendition: MadeRendition } | PipelineFailure> {
  const folder = renditionFolder(rung);
  const path = join(request.dir, folder);
  const playlist = await readMediaPlaylist(path, MEDIA_PLAYLIST);
  const joinedPath = join(request.scratchDir, `${folder}.mp4`);
  await joinRendition(path, playlist, joinedPath);
  let light: MadeRendition['light'] = null;
  let roundTrip: RoundTripInRun | null = null;
  if (rung.range === 'PQ') {
    const trip = await roundTripOfRung(rung, joinedPath, request);
    let measured: Awaited<ReturnType<typeof measureLightLevels>>;
    try {
      measured = await measureLightLevels(joinedPath, {
        width: rung.width,
        height: rung.height,
        ffmpegPath: request.ffmpegPath,
        signal: request.signal,
        timeLimitMs: request.timeLimitMs,
        roundTrip: trip?.pass,
      });
    } finally {
      if (trip?.lut) await rm(trip.lut, { force: true });
      await rm(referencePath(request, rung), { force: true });
    }
    if (!measured.ok) {
      return measured.run
        ? processFailure(measured.run, started)
        : failure('processing_failed', 'Processing failed.', [], started);
    }
    const peakNits = request.hdr.peakNits;
    const levels = withinMasteringPeak(measured.levels, peakNits);
    // Written where a player of the codec reads them: the init segment's sample entry for both (`mdcv`/`clli`
    // in `hvc1` or `av01`), and in the stream HEVC's CLL SEI or AV1's metadata OBUs of every segment.
    await writeHdrMetadata(join(path, playlist.map ?? ''), { levels, peakNits });
    if (rung.codec === 'hevc') {
      for (const segment of playlist.segments) await writeSegmentLightLevels(join(path, segment.uri), levels);
    } else {
      let written = 0;
      for (const segment of playlist.segments)
        written += await writeAv1SegmentLightLevels(join(path, segment.uri), levelsToWrite(levels));
      if (written === 0) throw new Error(`${folder}: the AV1 stream carries no content light metadata`);
    }
    // The checks read the rung as a player gets it: joined again from the files as stored.
    await joinRendition(path, playlist, joinedPath);
    light = { masteringPeakNits: peakNits, ...levelsToWrite(levels) };
    if (trip && measured.roundTripSsim !== null) roundTrip = { ...trip.record, ssim: measured.roundTripSsim };
  }
  return {
    ok: true,
    rendition: {
      rung,
      folder,
      codecs: await codecsOfInitSegment(join(path, playlist.map ?? '')),
      peakBitrate: peakBitrate(playlist),
      averageBitrate: averageBitrate(playlist),
      segments: playlist.segments.length,
      durationSeconds: Math.round(totalDuration(playlist) * 1000) / 1000,
      starts: segmentStarts(playlist),
      durations: playlist.segments.map((segment) => segment.duration),
      targetDuration: playlist.targetDuration,
      frameRate,
      light,
      joinedPath,
      roundTrip,
    },
  };
}

/**
 * The round trip the light pass of a PQ rung measures as the output check would (output-measure.ts
 * roundTripSsim): the same sampled frames of the same source, taken back through the inverse mapping
 * (its LUT written beside the rung when the mapping needs one; the caller removes it).
 */
async function roundTripOfRung(
  rung: RungSpec,
  joinedPath: string,
  request: FinishRequest,
): Promise<{ pass: LightPassRoundTrip; record: Omit<RoundTripInRun, 'ssim'>; lut: string | null } | null> {
  const video = request.probe.video;
  const { mapping, transfer, peakNits } = request.hdr;
  if (!video) return null;
  const choice = { mapping, transfer, peakNits };
  const lut = inverseLutPath(joinedPath, choice);
  if (lut) await writeInverseLut(lut, choice, video);
  const every = declaredSampleEvery(request.probe, ROUND_TRIP_SAMPLES);
  const outputSize = { width: rung.width, height: rung.height };
  const sourceSize = { width: video.width, height: video.height };
  return {
    pass: {
      every,
      back: backToSdr(choice, video, lut),
      against: request.referencesKept
        ? { referencePath: referencePath(request, rung), size: outputSize }
        : { source: request.input, compared: sourceAsCompared(sourceSize, outputSize) },
    },
    record: { source: request.input, every, outputSize, sourceSize, choice },
    lut,
  };
}

async function readAudio(dir: string): Promise<LadderSuccess['audio']> {
  const folder = join(dir, AUDIO_FOLDER);
  const playlist = await readMediaPlaylist(folder, MEDIA_PLAYLIST);
  return {
    codecs: await codecsOfInitSegment(join(folder, playlist.map ?? '')),
    peakBitrate: peakBitrate(playlist),
    averageBitrate: averageBitrate(playlist),
    segments: playlist.segments.length,
  };
}

/** The init segment and every media segment, in order, as one fragmented MP4. */
async function joinRendition(folder: string, playlist: MediaPlaylist, output: string): Promise<void> {
  if (!playlist.map) throw new Error(`${folder}: the playlist has no EXT-X-MAP`);
  const names = [playlist.map, ...playlist.segments.map((segment) => segment.uri)];
  await concatFiles(
    names.map((name) => join(folder, name)),
    output,
  );
}
