import type { ErrorCode } from '../common/errors';
import type { AudioOutput, Sdr2HdrOutput } from '../jobs/output-options';

interface RunItemCommon {
  inputPath: string;
  /** Where the output goes; the runner adds the extension of the container. */
  outputPath: string;
  signal: AbortSignal;
  /** Wall-clock budget left for this item. */
  timeLimitMs: number;
  onProgress(fraction: number): void;
  /** The wall time of the runner's own stages (the probe of the local input, the media tools' run). */
  onStage?(stage: 'probe' | 'encode', ms: number): void;
  /**
   * Judges the probed input before anything runs (the processor holds it to what the submit checked
   * and priced): a failure ends the item with it, null goes on.
   */
  admit(input: {
    durationSeconds: number;
    height: number | null;
  }): { ok: false; code: ErrorCode; message: string } | null;
}

/** One item of a job for its pipeline, with the job's resolved output options. */
export type RunItemRequest = RunItemCommon &
  (
    | {
        api: 'sdr2hdr';
        output: Sdr2HdrOutput;
        /** Lines of the output picture's short side: the requested resolution, never upscaled. */
        targetHeight: number | undefined;
      }
    | { api: 'audio'; output: AudioOutput }
  );

export type RunItemResult =
  | {
      ok: true;
      processedSeconds: number;
      outputHeight: number;
      container: string;
      contentType: string;
      media: Record<string, unknown>;
    }
  | { ok: false; code: ErrorCode; message?: string };

/** The media pipelines as the processor sees them (ffmpeg lives behind this). */
export interface MediaRunner {
  run(request: RunItemRequest): Promise<RunItemResult>;
}

export const MEDIA_RUNNER = Symbol('MEDIA_RUNNER');
