// The one place an sdr2hdr output gains its light map (docs/api-decisions.md §12): after the output is
// made, the MediaRunner renders the middle frame of the output in false colour beside the same source
// frame. The map is an aid for reading the result, not what the customer pays for: when it cannot be
// made the item still succeeds, without `light_map_url`, and the reason goes to the logs.
import type { Logger } from '@nestjs/common';
import type { HdrOutputSpec } from '../media/output-spec';
import type { MediaRun, MediaRunner, RunItemResult } from './media-runner';

export interface LightMapStep extends MediaRun {
  runner: MediaRunner;
  logger: Logger;
  /** The source the output frame was made from. */
  sourcePath: string;
  /** The file to take the output frame from (defaults to the made output itself). */
  framePath?: string;
  /** Where `framePath` starts in the item (a segment's start), so the frame's time is the item's. */
  frameOffsetSeconds?: number;
  pngPath: string;
  output: HdrOutputSpec;
  /** For the log line when the map could not be made. */
  context: { job_id: string; item: number };
}

/** The result with `lightMapPath` (and its frame's time) set when the map was made; other results unchanged. */
export async function withLightMap(result: RunItemResult, step: LightMapStep): Promise<RunItemResult> {
  if (!result.ok || step.signal.aborted) return result;
  const rendered = await step.runner.lightMap({
    sourcePath: step.sourcePath,
    outputPath: step.framePath ?? result.path,
    pngPath: step.pngPath,
    transfer: step.output.transfer,
    sourceColour: result.sourceColour,
    signal: step.signal,
    timeLimitMs: step.timeLimitMs,
  });
  if (rendered.ok) {
    const frameSeconds = Math.round((rendered.frameSeconds + (step.frameOffsetSeconds ?? 0)) * 1000) / 1000;
    return { ...result, lightMapPath: rendered.path, lightMapFrameSeconds: frameSeconds };
  }
  step.logger.warn({ ...step.context, stderr: rendered.stderrTail }, 'could not render the light map');
  return result;
}
