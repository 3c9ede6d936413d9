import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { TRANSFER_TAGS } from '../media/ffmpeg-args';
import { convertSdrToHdr, normaliseSpeechLoudness, type OutputLight } from '../media/pipelines';
import { probeMedia } from '../media/probe';
import { QUALITY_PRESETS } from '../media/quality-presets';
import type { RunItemRequest, RunItemResult, MediaRunner } from './media-runner';

export const CONTENT_TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
};

/** Runs one item through its pipeline: probe the local input again (full verdict, then the caller's), then ffmpeg. */
@Injectable()
export class FfmpegMediaRunner implements MediaRunner {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async run(request: RunItemRequest): Promise<RunItemResult> {
    const probing = performance.now();
    const probed = await probeMedia(request.inputPath, {
      api: request.api,
      ffprobePath: this.config.ffprobePath,
      maxPixels: this.config.workerMaxPixels,
      signal: request.signal,
    });
    request.onStage?.('probe', performance.now() - probing);
    if (!probed.ok)
      return {
        ok: false,
        code: probed.code === 'timeout' ? 'processing_failed' : probed.code,
        message: probed.message,
      };
    const refused = request.admit({
      durationSeconds: probed.probe.durationSeconds,
      height: probed.probe.video?.height ?? null,
    });
    if (refused) return refused;
    const common = {
      input: request.inputPath,
      probe: probed.probe,
      signal: request.signal,
      timeLimitMs: request.timeLimitMs,
      onProgress: request.onProgress,
      ffmpegPath: this.config.ffmpegPath,
    };
    if (request.api === 'sdr2hdr') {
      const { container, peak_nits: peakNits, quality, mapping, transfer } = request.output;
      const output = `${request.outputPath}.${container}`;
      const encoding = performance.now();
      const result = await convertSdrToHdr({
        ...common,
        output,
        container,
        targetHeight: request.targetHeight,
        peakNits: peakNits ?? undefined,
        mapping,
        transfer,
        ...QUALITY_PRESETS[quality],
      });
      request.onStage?.('encode', performance.now() - encoding);
      if (!result.ok) return { ok: false, code: result.code, message: result.message };
      return {
        ok: true,
        processedSeconds: result.processedSeconds,
        outputHeight: result.height,
        container,
        contentType: CONTENT_TYPES[container],
        media: sdr2hdrMedia(result.width, result.height, quality, result.light),
      };
    }
    const { container, target_lufs: targetLufs } = request.output;
    const output = `${request.outputPath}.${container}`;
    const encoding = performance.now();
    const result = await normaliseSpeechLoudness({ ...common, output, container, targetLufs });
    request.onStage?.('encode', performance.now() - encoding);
    if (!result.ok) return { ok: false, code: result.code, message: result.message };
    return {
      ok: true,
      processedSeconds: result.processedSeconds,
      outputHeight: 0,
      container,
      contentType: CONTENT_TYPES[container],
      media: {
        integrated_lufs: round(result.output.integratedLufs),
        true_peak_dbtp: round(result.output.truePeakDbtp),
        input_integrated_lufs: round(result.input.integratedLufs),
        speech_seconds: round(result.speech.speechSeconds),
      },
    };
  }
}

/** What an sdr2hdr output is (the asset's `media`, the job view's `output.video`), one pass or joined. */
export function sdr2hdrMedia(
  width: number,
  height: number,
  quality: string,
  light: OutputLight,
): Record<string, unknown> {
  return {
    codec: 'hevc',
    profile: 'main10',
    width,
    height,
    hdr: light.transfer === 'hlg' ? 'HLG' : 'HDR10',
    transfer: TRANSFER_TAGS[light.transfer],
    primaries: 'bt2020',
    quality,
    light: {
      mapping: light.mapping,
      mastering_peak_nits: light.masteringPeakNits,
      max_cll: light.maxCll,
      max_fall: light.maxFall,
    },
  };
}

function round(value: number): number | null {
  return Number.isFinite(value) ? Math.round(value * 10) / 10 : null;
}
