// What a job produces, per API (docs/api-decisions.md §4): the allowed values and the defaults, in one place. The
// submit resolves the client's `output` once (defaults filled in) and stores that, so the worker, the
// price and the media runner all read the same typed options and never apply a default again.
import { DEFAULT_PEAK_NITS, outputSize } from '../media/ffmpeg-args';
import { DEFAULT_QUALITY, type Quality } from '../media/quality-presets';
import type { AudioOutputContainer, VideoOutputContainer } from '../media/media.types';
import type { JobApi } from './job.types';

export const RESOLUTIONS = { '720p': 720, '1080p': 1080, '2160p': 2160 } as const;
export type Resolution = keyof typeof RESOLUTIONS | 'source';
export const RESOLUTION_CHOICES: readonly Resolution[] = ['source', '720p', '1080p', '2160p'];

export const VIDEO_CONTAINERS: readonly VideoOutputContainer[] = ['mp4', 'mov'];
export const AUDIO_CONTAINERS: readonly AudioOutputContainer[] = ['wav', 'm4a'];

export interface Sdr2HdrOutput {
  resolution: Resolution;
  /** Mastering display peak luminance (cd/m²). */
  peak_nits: number;
  container: VideoOutputContainer;
  /** Speed or fidelity of the encode (src/media/quality-presets.ts). */
  quality: Quality;
}

export interface AudioOutput {
  /** Target integrated loudness of the speech (LUFS). */
  target_lufs: number;
  container: AudioOutputContainer;
}

/** The options of each API, as stored on the job (snake_case: the column holds the API's own words). */
export interface OutputOptionsOf {
  sdr2hdr: Sdr2HdrOutput;
  audio: AudioOutput;
}
export type OutputOptions = OutputOptionsOf[JobApi];

/** A job's API with its options: narrowing on `api` gives the right options type. */
export type JobOutput = { [A in JobApi]: { api: A; output: OutputOptionsOf[A] } }[JobApi];

export const OUTPUT_DEFAULTS: { [A in JobApi]: OutputOptionsOf[A] } = {
  sdr2hdr: { resolution: 'source', peak_nits: DEFAULT_PEAK_NITS, container: 'mp4', quality: DEFAULT_QUALITY },
  audio: { target_lufs: -16, container: 'wav' },
};

/** What a client may send as `output`: any field omitted, or null (which means the default, too). */
export type RequestedOutput =
  | { api: 'sdr2hdr'; output?: { [F in keyof Sdr2HdrOutput]?: Sdr2HdrOutput[F] | null } }
  | { api: 'audio'; output?: { [F in keyof AudioOutput]?: AudioOutput[F] | null } };

/** The client's options with every omitted or null field set to its default (the body was validated). */
export function resolveOutput(requested: RequestedOutput): JobOutput {
  switch (requested.api) {
    case 'sdr2hdr': {
      const given = requested.output ?? {};
      const defaults = OUTPUT_DEFAULTS.sdr2hdr;
      return {
        api: 'sdr2hdr',
        output: {
          resolution: given.resolution ?? defaults.resolution,
          peak_nits: given.peak_nits ?? defaults.peak_nits,
          container: given.container ?? defaults.container,
          quality: given.quality ?? defaults.quality,
        },
      };
    }
    case 'audio': {
      const given = requested.output ?? {};
      const defaults = OUTPUT_DEFAULTS.audio;
      return {
        api: 'audio',
        output: {
          target_lufs: given.target_lufs ?? defaults.target_lufs,
          container: given.container ?? defaults.container,
        },
      };
    }
  }
}

/** A stored job's options, typed by its API (the column was written by resolveOutput). */
export function storedOutput(job: { api: JobApi; output_options: OutputOptions }): JobOutput {
  return { api: job.api, output: job.output_options } as JobOutput;
}

export type OutputPicture =
  { output_width: number; output_height: number } | { output_width: null; output_height: null };

/**
 * The picture an item will produce, as the worker encodes it (src/media/ffmpeg-args.ts outputSize):
 * the requested lines on the short side, never upscaling the source; null without a picture (audio).
 */
export function outputPicture(job: JobOutput, source: { width: number | null; height: number | null }): OutputPicture {
  if (job.api !== 'sdr2hdr' || !source.width || !source.height) return { output_width: null, output_height: null };
  const { resolution } = job.output;
  const size = outputSize(
    { width: source.width, height: source.height },
    resolution === 'source' ? undefined : RESOLUTIONS[resolution],
  );
  return { output_width: size.width, output_height: size.height };
}

/** The height of the output: the requested tier, never upscaling the source. */
export function outputHeight(sourceHeight: number, resolution: Resolution): number {
  return resolution === 'source' ? sourceHeight : Math.min(sourceHeight, RESOLUTIONS[resolution]);
}
