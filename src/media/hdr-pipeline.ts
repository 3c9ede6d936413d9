// The SDR → HDR pipeline: the optional mapping LUT, one ffmpeg encode (hdr-args.ts), then for PQ a pass
// that decodes the written file to measure its light (and the round trip's SSIM) and writes the measured
// levels into its boxes. Returns a typed verdict, never throws for media or process outcomes.
import { rm, writeFile } from 'node:fs/promises';
import { buildSdrToHdrArgs, type SdrToHdrArgsInput } from './hdr-args';
import { outputSize } from './output-geometry';
import { confinedCpuCount } from './cpu-set';
import { buildExpandCube, usesMappingLut, type Mapping, type Transfer } from './hdr-mapping';
import { levelsToWrite, readHdrMetadata, writeHdrMetadata } from './hdr-metadata';
import { measureLightLevels, type LightLevels } from './light-levels';
import { measurePacketEnds } from './packet-end';
import {
  encodeCeiling,
  encryptedFailure,
  failure,
  processedSeconds,
  processFailure,
  remaining,
  removePartial,
  type PipelineFailure,
  type PipelineRunOptions,
} from './pipeline-outcome';
import { backToSdr, declaredSampleEvery, inverseLutPath, referenceOutputArgs, writeInverseLut } from './round-trip';
import { DEFAULT_PROGRESS_INTERVAL_MS, ProgressThrottle, runFfmpeg } from './run-ffmpeg';

/** What the argv builder takes, plus how to run it. */
export interface SdrToHdrRequest extends PipelineRunOptions, SdrToHdrArgsInput {
  /**
   * PQ: also measure the round trip's SSIM on this many sampled frames in the light pass, which decodes the
   * written file anyway (`roundTripSsim` of the answer; src/media/round-trip.ts). Unset: not measured.
   */
  roundTripSamples?: number;
}

export interface SdrToHdrSuccess {
  ok: true;
  outputPath: string;
  /** Seconds of output ffmpeg reported writing (falls back to the probed duration). */
  processedSeconds: number;
  width: number;
  height: number;
  /** Where the light went: the mapping, the ST 2086 peak and the picture's measured levels (null for HLG). */
  light: OutputLight;
  /** Round-trip luma SSIM of the written file (roundTripSamples), null when not measured. */
  roundTripSsim: number | null;
  wallMs: number;
  /** The exact argv that ran, for logs. */
  args: string[];
}

export interface OutputLight {
  mapping: Mapping;
  transfer: Transfer;
  masteringPeakNits: number | null;
  maxCll: number | null;
  maxFall: number | null;
}

/** The light block of a finished output (one pass or joined from segments), from its own boxes. */
export async function readOutputLight(path: string, mapping: Mapping, transfer: Transfer): Promise<OutputLight> {
  const none = { mapping, transfer, masteringPeakNits: null, maxCll: null, maxFall: null };
  if (transfer === 'hlg') return none;
  const written = await readHdrMetadata(path);
  if (!written) return none;
  return { ...none, masteringPeakNits: written.peakNits, ...written.levels };
}

// Share of the progress bar: the encode, then decoding the output to measure its light (PQ only).
const ENCODE_WEIGHT = 0.85;

export async function convertSdrToHdr(request: SdrToHdrRequest): Promise<SdrToHdrSuccess | PipelineFailure> {
  const started = Date.now();
  const deadline = request.timeLimitMs !== undefined ? started + request.timeLimitMs : undefined;
  const video = request.probe.video;
  if (!video) return failure('processing_failed', 'The input has no video stream.', [], started);
  if (request.probe.encrypted) return encryptedFailure(started);
  const { mapping, transfer, peakNits } = request;
  const lutPath = usesMappingLut({ mapping, transfer }) ? `${request.output}.mapping.cube` : undefined;
  const throttle = new ProgressThrottle(request.onProgress, request.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  const measures = transfer === 'pq';
  const size = outputSize(video, request.targetHeight);
  // The round trip rides on the light pass: the encode keeps the source's sampled frames, the light pass
  // compares the written file's with them.
  const choice = { mapping, transfer, peakNits };
  const roundTrip =
    measures && request.roundTripSamples
      ? {
          referencePath: `${request.output}.reference.yuv`,
          every: declaredSampleEvery(request.probe, request.roundTripSamples),
          lut: inverseLutPath(request.output, choice),
        }
      : undefined;
  try {
    if (lutPath) {
      const cube = buildExpandCube({
        choice: { mapping, transfer, peakNits },
        sourcePrimaries: video.colorPrimaries,
        sourceTransfer: video.colorTransfer,
      });
      await writeFile(lutPath, cube);
    }
    const args = buildSdrToHdrArgs({ ...request, lutPath, confinedCpus: request.confinedCpus ?? confinedCpuCount() });
    if (roundTrip) {
      args.push(...referenceOutputArgs(video.index, roundTrip.every, video, size, roundTrip.referencePath));
      if (roundTrip.lut) await writeInverseLut(roundTrip.lut, choice, video);
    }
    const run = await runFfmpeg(args, {
      ffmpegPath: request.ffmpegPath,
      durationSeconds: request.probe.durationSeconds,
      maxOutSeconds: encodeCeiling(request.probe.durationSeconds),
      onProgress: (fraction) => throttle.report(measures ? fraction * ENCODE_WEIGHT : fraction),
      progressIntervalMs: 0,
      signal: request.signal,
      timeLimitMs: request.timeLimitMs,
    });
    if (run.status !== 'succeeded') {
      await removePartial(request.output);
      return processFailure(run, started);
    }
    const light: OutputLight = { mapping, transfer, masteringPeakNits: null, maxCll: null, maxFall: null };
    let roundTripSsim: number | null = null;
    if (measures) {
      const measured = await measureLightLevels(request.output, {
        width: size.width,
        height: size.height,
        ffmpegPath: request.ffmpegPath,
        signal: request.signal,
        timeLimitMs: remaining(deadline),
        roundTrip: roundTrip && {
          against: { referencePath: roundTrip.referencePath, size },
          every: roundTrip.every,
          back: backToSdr(choice, video, roundTrip.lut),
        },
      });
      if (!measured.ok) {
        await removePartial(request.output);
        const run = measured.run;
        return run ? processFailure(run, started) : failure('processing_failed', 'Processing failed.', [], started);
      }
      const levels = withinMasteringPeak(measured.levels, peakNits);
      try {
        await writeHdrMetadata(request.output, { levels, peakNits });
      } catch (error) {
        await removePartial(request.output);
        return failure('processing_failed', 'Processing failed.', [String(error)], started);
      }
      Object.assign(light, { masteringPeakNits: peakNits, ...levelsToWrite(levels) });
      roundTripSsim = measured.roundTripSsim;
    }
    throttle.complete();
    return {
      ok: true,
      outputPath: request.output,
      processedSeconds: await decodedEnd(request, run.outTimeSeconds),
      width: size.width,
      height: size.height,
      light,
      roundTripSsim,
      wallMs: Date.now() - started,
      args,
    };
  } finally {
    if (lutPath) await rm(lutPath, { force: true });
    if (roundTrip)
      await Promise.all([roundTrip.referencePath, roundTrip.lut].map((path) => path && rm(path, { force: true })));
  }
}

/**
 * MaxCLL and MaxFALL as stated in the file: the decoded picture's, at most the mastering display's peak. The
 * signal never exceeds the peak before the encode (the mapping limits every channel); only the 4:2:0
 * reconstruction on one-pixel saturated edges overshoots (a few hundred pixels of a frame), light a
 * mastering display clips. Platform QC rejects MaxCLL above the mastering peak, and a TV tone-maps to it.
 */
export function withinMasteringPeak(levels: LightLevels, peakNits: number): LightLevels {
  const maxCll = Math.min(levels.maxCll, peakNits);
  return { maxCll, maxFall: Math.min(levels.maxFall, maxCll) };
}

/**
 * Seconds of video made: the end of the output's last frame (pts + duration, read from its packets), at most
 * the source's length. ffmpeg's progress `out_time` trails it by the frames still in the encoder's
 * reorder delay (90 frames at 30 fps read 2.900 s); falls back to it when the packets cannot be read.
 */
async function decodedEnd(request: SdrToHdrRequest, outTimeSeconds: number | null): Promise<number> {
  const ends = await measurePacketEnds(request.output, {
    ffprobePath: request.ffprobePath,
    timeoutMs: 30_000,
    signal: request.signal,
  }).catch(() => null);
  const videoEnd = ends?.get(0)?.endSeconds;
  if (videoEnd === undefined || !(videoEnd > 0)) return processedSeconds(outTimeSeconds, request.probe.durationSeconds);
  return Math.min(videoEnd, request.probe.durationSeconds);
}
