// What an sdr2hdr output is as the pipeline made it (the asset's `media` before the output is measured,
// then merged with what the file measured: src/processing/ffmpeg-output-checks.ts).
import { TRANSFER_TAGS } from '../media/hdr-args';
import type { OutputLight } from '../media/pipelines';

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
