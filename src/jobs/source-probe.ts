import type { ErrorCode } from '../common/errors';
import type { JobApi } from './job.types';

export type ProbeOutcome =
  | {
      ok: true;
      durationSeconds: number;
      width: number | null;
      height: number | null;
      /** The source's size when it announced one (a URL's Content-Length or Content-Range total). */
      sizeBytes?: number | null;
    }
  | { ok: false; code: ErrorCode; message?: string };

/**
 * Reads a source's container, streams and duration (ffprobe) and judges it for an API. When `signal`
 * aborts (the client went away) the probe process is killed and the call rejects.
 */
export interface SourceProbe {
  probe(target: string, api: JobApi, timeoutMs: number, signal?: AbortSignal): Promise<ProbeOutcome>;
}

export const SOURCE_PROBE = Symbol('SOURCE_PROBE');
