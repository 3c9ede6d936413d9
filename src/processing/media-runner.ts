// The worker's port to the media tools: every ffmpeg and ffprobe run, and the files they make, go
// through a MediaRunner, so a use case's spec runs without ffmpeg and a test can put its own runner
// in. Each call that makes a file answers with the path it wrote: the caller stores exactly that file,
// so a test may wrap the real runner (FfmpegMediaRunner) and replace one output with another file.
import type { ErrorCode } from '../common/errors';
import type { MediaApi, ProbeOutcome } from '../media/media.types';
import type { OutputCheck } from '../media/output-checks';
import type { MadeRendition } from '../media/hls/package-ladder';
import type { HdrOutputSpec, LoudnessOutputSpec } from '../media/output-spec';
import type { SourceColour } from '../media/light-map';
import type { RunMeasurements } from './run-measurements';

/** How a media tool runs: stopped by the job's cancel, within what is left of its time. */
export interface MediaRun {
  signal: AbortSignal;
  /** Wall-clock budget left for this run. */
  timeLimitMs: number;
}

interface RunItemCommon extends MediaRun {
  inputPath: string;
  /** Where the output goes; the runner adds the extension of the container. */
  outputPath: string;
  /** The output's progress, 0…1, at most once a second (the media layer's ProgressThrottle). */
  onProgress(fraction: number): void;
  /** The wall time of the runner's own stages (the probe of the local input, the media tools' run). */
  onStage?(stage: 'probe' | 'encode', ms: number): void;
  /**
   * Judges the probed input before anything runs (the processor holds it to what the submit checked
   * and priced): a failure ends the item with it, null goes on.
   */
  admit(input: {
    durationSeconds: number;
    width: number | null;
    height: number | null;
  }): { ok: false; code: ErrorCode; message: string } | null;
  /**
   * false: make the output without measuring it on the way (MadeOutput.measuredInRun), so the check
   * measures it all from the file — the checks bench's "checks off" baseline. Default true.
   */
  measureInRun?: boolean;
}

/** One item of a job for its pipeline, with the job's output spec (jobs.output_spec, read as it is). */
export type RunItemRequest = RunItemCommon &
  ({ api: 'sdr2hdr'; output: HdrOutputSpec } | { api: 'audio'; output: LoudnessOutputSpec });

/** An output a runner made: the file, and what it is (the asset's container, content type and media). */
export interface MadeOutput {
  ok: true;
  path: string;
  processedSeconds: number;
  /** The output picture's sides (0 without a picture: audio); the settlement prices its pixels. */
  outputWidth: number;
  outputHeight: number;
  container: string;
  contentType: string;
  media: Record<string, unknown>;
  /** The source's duration as the run's own probe read it (the audio check compares with it). */
  sourceSeconds?: number;
  /**
   * The source's colour tags as the run's own probe read them (sdr2hdr): the light map's source frame is
   * converted with them, so its step need not probe the unchanged source again.
   */
  sourceColour?: SourceColour;
  /** The item's light map (a PNG in the work folder, sdr2hdr only), stored beside the output. */
  lightMapPath?: string;
  /** The time of the frame the light map shows (seconds from the item's start). */
  lightMapFrameSeconds?: number;
  /** What the run measured of the file it wrote, for the check while the file is unchanged (run-measurements.ts). */
  measuredInRun?: RunMeasurements;
  /**
   * An HLS package (`output.package: hls`): `path` is its folder, every file under which is stored under the
   * item's package prefix; each rung is checked like a file (its init and segments joined, `joinedPath`).
   */
  package?: MadePackage;
}

export interface MadePackage {
  renditions: MadeRendition[];
  /** The audio rendition's bit rates (bit/s), which every variant's bandwidth includes; null without audio. */
  audio: { peakBitrate: number; averageBitrate: number } | null;
  frameRate: number;
  /**
   * SHA-256 of each joined rung (by folder) as the run left it, for the rungs it measured a round trip of:
   * the check counts that measurement only while the file is still this one (run-measurements.ts).
   */
  joinedSha256?: Record<string, string>;
}

/** Media that could not be made: the item's catalogue code and the message a customer may read. */
export interface MediaFailure {
  ok: false;
  code: ErrorCode;
  message?: string;
}

export type RunItemResult = MadeOutput | MediaFailure;

/** One segment of a long sdr2hdr item, encoded exactly as the whole item would be (no audio). */
export interface EncodeSegmentRequest extends MediaRun {
  inputPath: string;
  /** The encoded part's path (mp4, whatever the item's container: the join remuxes). */
  outputPath: string;
  output: HdrOutputSpec;
  onProgress(fraction: number): void;
}

export type EncodeSegmentResult = { ok: true; path: string; processedSeconds: number } | MediaFailure;

/** One unit of a split package (src/media/hls/package-parts.ts): its range of the source, every rung. */
export interface EncodePackagePartRequest extends MediaRun {
  /** The whole source (the unit decodes its own range of it). */
  inputPath: string;
  unit: { start: number; duration: number };
  /** The item's last unit reads to the end of the source. */
  last: boolean;
  /** An empty folder: each rung's part goes there as `<rendition folder>.mp4`. */
  partsDir: string;
  output: HdrOutputSpec;
  onProgress(fraction: number): void;
}

export type EncodePackagePartResult =
  { ok: true; files: Record<string, string>; processedSeconds: number } | MediaFailure;

/** A split package's units joined into the package (each rung by stream copy), the audio from the source. */
export interface JoinPackageRequest extends MediaRun {
  /** The whole source: its audio, and what the rungs are checked against. */
  inputPath: string;
  /** Each unit's folder of rung parts, in order. */
  unitDirs: string[];
  /** As RunItemRequest's: the package goes in `<outputPath>.hls/`. */
  outputPath: string;
  output: HdrOutputSpec;
}

/** A tool run that failed; its stderr is for the logs only. */
export interface ToolFailure {
  ok: false;
  stderrTail: string[];
}

export interface SplitRequest extends MediaRun {
  inputPath: string;
  videoIndex: number;
  /** Where to cut (seconds): the video's parts start at the first keyframe at or after each. */
  cuts: number[];
  /** An empty folder for the parts. */
  dir: string;
}

export interface JoinRequest extends MediaRun {
  /** The encoded parts, in order. */
  parts: string[];
  /** The source's audio, muxed once into the joined output. */
  audio: { path: string; codec: string } | null;
  /** Where the output goes; the runner adds the extension of the container. */
  outputPath: string;
  output: HdrOutputSpec;
}

/** An output to measure and check against its source and what was ordered (docs/api-decisions.md §12). */
export type CheckRequest = MediaRun & {
  output: MadeOutput;
  /** The source in one file, or its parts in order (a split item). */
  sourcePaths: string[];
} & ({ api: 'sdr2hdr'; options: HdrOutputSpec } | { api: 'audio'; options: LoudnessOutputSpec });

/** What the output file measured (the job view's `output.video` or `output.audio`) and its checks. */
export type CheckedOutput = { ok: true; measured: Record<string, unknown>; checks: OutputCheck[] } | MediaFailure;
/** A light map of an sdr2hdr output: the source's frame beside the output's in false colour, one PNG. */
export interface LightMapRequest extends MediaRun {
  /** The source of the output (for a segmented item: the source part the encoded part was made from). */
  sourcePath: string;
  /** The output made from it (an item's output, or one encoded part). */
  outputPath: string;
  /** Where the PNG goes. */
  pngPath: string;
  transfer: HdrOutputSpec['transfer'];
  /** The source's colour tags when the run already probed it (MadeOutput.sourceColour); absent: probed here. */
  sourceColour?: SourceColour;
}

/** The media pipelines and tools as the worker's use cases see them (ffmpeg lives behind this). */
/** A light map made: the PNG, and the time of the frame it shows (seconds from the item's start). */
export interface LightMapMade {
  ok: true;
  path: string;
  frameSeconds: number;
}

export interface MediaRunner {
  /** One item in one pass: probe the local input again, judge it (`admit`), run its pipeline. */
  run(request: RunItemRequest): Promise<RunItemResult>;
  /** The probe's verdict on a local file, by the rules of `api`. */
  probe(path: string, api: MediaApi, signal: AbortSignal): Promise<ProbeOutcome>;
  /** The keyframe times of a video stream; null when they could not be read. */
  keyframes(path: string, videoIndex: number, run: MediaRun): Promise<number[] | null>;
  /** Cuts the video stream without re-encoding; the parts' paths in order. */
  split(request: SplitRequest): Promise<{ ok: true; parts: string[] } | ToolFailure>;
  /** Copies one audio stream out of the source (no re-encode), to `outputPath`. */
  extractAudio(
    request: MediaRun & { inputPath: string; audioIndex: number; outputPath: string },
  ): Promise<{ ok: true } | ToolFailure>;
  encodeSegment(request: EncodeSegmentRequest): Promise<EncodeSegmentResult>;
  /** One unit of a split package: every rung of its range, decoded once. */
  encodePackagePart(request: EncodePackagePartRequest): Promise<EncodePackagePartResult>;
  /** Packages a split package's units (no re-encode of the video) and reads it back as one pass does. */
  joinPackage(request: JoinPackageRequest): Promise<RunItemResult>;
  /** Joins encoded parts without re-encoding, with the audio, into one output. */
  join(request: JoinRequest): Promise<RunItemResult>;
  /** Measures a made output from the file itself and runs its checks (src/media/output-checks.ts). */
  check(request: CheckRequest): Promise<CheckedOutput>;
  /** Renders the light map of a frame near the middle of the output; the PNG's path and the frame's time. */
  lightMap(request: LightMapRequest): Promise<LightMapMade | ToolFailure>;
}

export const MEDIA_RUNNER = Symbol('MEDIA_RUNNER');
