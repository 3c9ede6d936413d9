// An sdr2hdr item whose output is an HLS package (`output.package: hls`): its rungs (ladder.ts itemRungs,
// the rule the submit priced), made and packaged in one ffmpeg run (src/media/hls) — or, for a long item, in
// units any worker takes and a join (makePackagePart, joinPackage) —, then each rung checked
// like a file output (src/media/output-checks.ts) and the package's own checks (aligned boundaries,
// segment durations). What the job view and the webhook show of it is `renditions[]` (docs/api-guide.md,
// "Streaming packages").
import { truncatedSource } from '../jobs/decoded-length';
import { TRANSFER_TAGS } from '../media/hdr-args';
import { packageLadder, type LadderSuccess, type MadeRendition } from '../media/hls/package-ladder';
import { encodePackagePart, joinPackageParts } from '../media/hls/package-parts';
import type { PipelineFailure } from '../media/pipelines';
import { segmentAlignmentCheck, segmentDurationCheck } from '../media/hls/package-checks';
import { itemRungs } from '../media/ladder';
import type { ProbeResult } from '../media/media.types';
import { checkSdrVideoOutput, checkVideoOutput, type OutputCheck } from '../media/output-checks';
import { measureSourceVideo, type MeasureTools, type MeasuredVideo } from '../media/output-measure';
import type { HdrOutputSpec } from '../media/output-spec';
import { fileSha256, stillTheFile } from './run-measurements';
import type { CheckedOutput, EncodePackagePartResult, MadeOutput, MadePackage, RunItemResult } from './media-runner';

export const HLS_CONTAINER = 'hls';
export const HLS_CONTENT_TYPE = 'application/vnd.apple.mpegurl';

export interface PackageRun extends MeasureTools {
  input: string;
  probe: ProbeResult;
  spec: HdrOutputSpec;
  /** The runner's output path: the package goes in `<outputPath>.hls/`, the joined rungs beside it. */
  outputPath: string;
  confinedCpus?: number;
  onProgress(fraction: number): void;
}

export async function makePackage(run: PackageRun): Promise<RunItemResult> {
  const { probe, spec } = run;
  if (!spec.ladder || !probe.video) return { ok: false, code: 'processing_failed' };
  const dir = `${run.outputPath}.hls`;
  const made = await packageLadder({
    ...ladderOf(run, probe.video, spec.ladder),
    dir,
    scratchDir: `${run.outputPath}.hls-rungs`,
  });
  return await packageResult(made, run);
}

/**
 * One unit of a long package (SEGMENT_SECONDS; src/media/hls/package-parts.ts): every rung of its range of
 * the source, one file each in `partsDir`.
 */
export async function makePackagePart(
  run: PackageRun & { unit: { start: number; duration: number }; last: boolean; partsDir: string },
): Promise<EncodePackagePartResult> {
  const { probe, spec } = run;
  if (!spec.ladder || !probe.video) return { ok: false, code: 'processing_failed' };
  const made = await encodePackagePart({
    ...ladderOf(run, probe.video, spec.ladder),
    unit: run.unit,
    last: run.last,
    partsDir: run.partsDir,
    scratchDir: `${run.partsDir}-scratch`,
  });
  if (!made.ok) return { ok: false, code: made.code, message: made.message };
  return { ok: true, files: made.files, processedSeconds: made.seconds };
}

/** A long package's units packaged and read back: the same result as makePackage's one run. */
export async function joinPackage(run: PackageRun & { unitDirs: string[] }): Promise<RunItemResult> {
  const { probe, spec } = run;
  if (!spec.ladder || !probe.video) return { ok: false, code: 'processing_failed' };
  const made = await joinPackageParts({
    ...ladderOf(run, probe.video, spec.ladder),
    unitDirs: run.unitDirs,
    dir: `${run.outputPath}.hls`,
    scratchDir: `${run.outputPath}.hls-rungs`,
  });
  return await packageResult(made, run);
}

/** The ladder pipeline's request for an item: its rungs (the rule the submit priced) and its HDR choice. */
function ladderOf(
  run: PackageRun,
  video: NonNullable<ProbeResult['video']>,
  ladder: NonNullable<HdrOutputSpec['ladder']>,
) {
  const { spec } = run;
  return {
    ...run,
    rungs: itemRungs(ladder, spec.transfer, video),
    ladder,
    hdr: { mapping: spec.mapping, transfer: spec.transfer, peakNits: spec.peakNits, preset: spec.preset },
  };
}

async function packageResult(made: LadderSuccess | PipelineFailure, run: PackageRun): Promise<RunItemResult> {
  const { probe, spec } = run;
  if (!made.ok) return { ok: false, code: made.code, message: made.message };
  // A source that decoded far shorter than it declared is truncated: invalid_media, as for a file output.
  const truncated = truncatedSource(probe.durationSeconds, made.processedSeconds);
  if (truncated) return { ok: false, code: 'invalid_media', message: truncated };
  const joinedSha256: Record<string, string> = {};
  for (const rendition of made.renditions)
    if (rendition.roundTrip) joinedSha256[rendition.folder] = await fileSha256(rendition.joinedPath);
  const pkg: MadePackage = {
    renditions: made.renditions,
    audio: made.audio,
    frameRate: probe.video?.fps ?? 25,
    joinedSha256,
  };
  const top = made.renditions[0].rung;
  return {
    ok: true,
    path: made.dir,
    processedSeconds: made.processedSeconds,
    outputWidth: top.width,
    outputHeight: top.height,
    container: HLS_CONTAINER,
    contentType: HLS_CONTENT_TYPE,
    media: { renditions: made.renditions.map((rendition) => renditionView(rendition, pkg, spec, null)) },
    sourceSeconds: probe.durationSeconds,
    package: pkg,
  };
}

/**
 * Every rung measured from its own files and checked like a file output (each check's `expected` names
 * the rendition), then the package's boundaries and segment lengths.
 */
export async function checkPackage(
  output: MadeOutput & { package: MadePackage },
  spec: HdrOutputSpec,
  sources: string[],
  tools: MeasureTools,
): Promise<CheckedOutput> {
  const pkg = output.package;
  const checks: OutputCheck[] = [];
  const renditions: Record<string, unknown>[] = [];
  // One count of the source's packets for every rung (a source in parts is measured per rung, as a file's).
  const sourceCounted = sources.length === 1 ? await measureSourceVideo(sources[0], false, tools) : undefined;
  for (const rendition of pkg.renditions) {
    const request = { ...tools, output: rendition.joinedPath, sources, sourceCounted };
    // The light pass's round trip counts only while the joined rung is the file it decoded.
    const roundTripInRun =
      rendition.roundTrip && (await stillTheFile(rendition.joinedPath, pkg.joinedSha256?.[rendition.folder]))
        ? rendition.roundTrip
        : undefined;
    const { measured, checks: own } =
      rendition.rung.range === 'SDR'
        ? await checkSdrVideoOutput(request)
        : await checkVideoOutput({
            ...request,
            quality: spec.quality,
            mapping: spec.mapping,
            transfer: spec.transfer,
            peakNits: spec.peakNits,
            codec: rendition.rung.codec === 'av1' ? 'av1' : 'hevc',
            roundTripInRun,
          });
    checks.push(...own.map((check) => ({ ...check, expected: `${rendition.folder}: ${check.expected}` })));
    renditions.push(renditionView(rendition, pkg, spec, measured));
  }
  const bounds = pkg.renditions.map(({ folder, starts, durations }) => ({ folder, starts, durations }));
  checks.push(segmentAlignmentCheck(bounds, pkg.frameRate), segmentDurationCheck(bounds));
  return { ok: true, measured: { renditions }, checks };
}

/**
 * One entry of `renditions[]` (docs/api-guide.md, "Streaming packages"): what was made, with the transfer
 * and length the file measured.
 */
function renditionView(
  rendition: MadeRendition,
  pkg: MadePackage,
  spec: HdrOutputSpec,
  measured: MeasuredVideo | null,
): Record<string, unknown> {
  const { rung, light } = rendition;
  const hdr = rung.range !== 'SDR';
  return {
    codec: rung.codec,
    width: measured?.width ?? rung.width,
    height: measured?.height ?? rung.height,
    transfer: measured?.transfer ?? (hdr ? TRANSFER_TAGS[spec.transfer] : 'bt709'),
    video_range: rung.range,
    bandwidth: rendition.peakBitrate + (pkg.audio?.peakBitrate ?? 0),
    average_bandwidth: rendition.averageBitrate + (pkg.audio?.averageBitrate ?? 0),
    frame_rate: measured?.frame_rate ?? rendition.frameRate,
    segments: rendition.segments,
    duration_seconds: measured?.duration_seconds ?? rendition.durationSeconds,
    light: hdr
      ? {
          mapping: spec.mapping,
          mastering_peak_nits: light?.masteringPeakNits ?? null,
          max_cll: light?.maxCll ?? null,
          max_fall: light?.maxFall ?? null,
        }
      : null,
  };
}
