import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { probeMedia } from '../media/probe';
import type { JobApi } from './job.types';
import { clientGone } from './probe-slots';
import type { ProbeOutcome, SourceProbe } from './source-probe';

/** The submit-time probe: ffprobe with a short timeout, judged for the API (container, codecs, decodability). */
@Injectable()
export class FfprobeSourceProbe implements SourceProbe {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async probe(target: string, api: JobApi, timeoutMs: number, signal?: AbortSignal): Promise<ProbeOutcome> {
    const outcome = await probeMedia(target, {
      signal,
      api,
      ffprobePath: this.config.ffprobePath,
      timeoutMs,
      // Encrypted input is accepted here and fails in the worker as drm_protected (charged 0, refunded).
      allowEncrypted: true,
      // The worker's pixel budget is the worker's verdict (out_of_memory on the job), not a submit error.
    }).catch((error: unknown) => {
      // probeMedia killed ffprobe because the client went away.
      if (signal?.aborted) throw clientGone();
      throw error;
    });
    if (!outcome.ok) {
      // A local probe that ran out of time says nothing about the media: ask the client to retry.
      if (outcome.code === 'timeout') return { ok: false, code: 'service_unavailable', message: outcome.message };
      return { ok: false, code: outcome.code, message: outcome.message };
    }
    const { video, durationSeconds } = outcome.probe;
    return { ok: true, durationSeconds, width: video?.width ?? null, height: video?.height ?? null };
  }
}
