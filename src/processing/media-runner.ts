import type { ErrorCode } from '../common/errors';
import type { JobApi } from '../jobs/pricing';

export interface RunItemRequest {
  api: JobApi;
  inputPath: string;
  /** Where the output goes; the runner picks the extension from the container. */
  outputPath: string;
  options: Record<string, unknown>;
  signal: AbortSignal;
  /** Wall-clock budget left for this item. */
  timeLimitMs: number;
  onProgress(fraction: number): void;
}

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
