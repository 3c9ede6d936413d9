// The production MediaRunner's `check`: an output measured from the file itself and judged by
// src/media/output-checks.ts. A measurement that could not run because the job was cancelled or ran out
// of time ends the item with that code; an output the tools cannot read at all fails a check of its own.
import { checkAudioOutput, checkVideoOutput, type OutputCheck } from '../media/output-checks';
import { MeasureFailed, type MeasureTools } from '../media/output-measure';
import type { CheckedOutput, CheckRequest } from './media-runner';
import { checkPackage } from './package-output';
import { stillMeasured } from './run-measurements';

export async function checkWithFfmpeg(
  request: CheckRequest,
  tools: MeasureTools,
  probeSeconds: (path: string) => Promise<number>,
): Promise<CheckedOutput> {
  try {
    // The run's own measurements count only while the file is the one they were made of.
    const made = request.output;
    if (request.api === 'sdr2hdr' && made.package)
      return await checkPackage({ ...made, package: made.package }, request.options, request.sourcePaths, tools);
    const inRun = await stillMeasured(request.output.path, request.output.measuredInRun);
    if (request.api === 'sdr2hdr') {
      const { quality, mapping, transfer, peakNits } = request.options;
      const { measured, checks } = await checkVideoOutput({
        ...tools,
        output: request.output.path,
        sources: request.sourcePaths,
        quality,
        mapping,
        transfer,
        peakNits,
        roundTripSsim: inRun.roundTripSsim,
      });
      // What was ordered and the light written stay beside the measured facts (the light block is itself
      // measured from the picture, src/media/light-levels.ts).
      return { ok: true, measured: { ...request.output.media, ...measured }, checks };
    }
    const sourceSeconds = request.output.sourceSeconds ?? (await probeSeconds(request.sourcePaths[0]));
    const { measured, checks } = await checkAudioOutput({
      ...tools,
      output: request.output.path,
      sourceSeconds,
      targetLufs: request.options.targetLufs,
      written: inRun.loudness,
    });
    return { ok: true, measured: { ...request.output.media, ...measured }, checks };
  } catch (error) {
    if (!(error instanceof MeasureFailed)) throw error;
    if (error.status === 'aborted') return { ok: false, code: 'job_cancelled' };
    if (error.status === 'timeout') return { ok: false, code: 'timeout' };
    const unreadable: OutputCheck = {
      name: 'readable',
      passed: false,
      expected: request.api === 'sdr2hdr' ? 'a video file the decoder reads' : 'an audio file the decoder reads',
      measured: `unreadable (${error.status})`,
    };
    return { ok: true, measured: {}, checks: [unreadable] };
  }
}
