// What a job produces, per API (docs/api-decisions.md §4): the allowed values and the defaults, in one place. The
// submit resolves the client's `output` once (defaults filled in) and stores that, so the worker, the
// price and the media runner all read the same typed options and never apply a default again.
import { DEFAULT_HDR_ENCODE } from '../media/encoder-settings';
import { knownOutputSize } from '../media/output-geometry';
import { HLG_DISPLAY_PEAK_NITS, type Mapping, type Transfer } from '../media/hdr-mapping';
import { ladderSpec } from '../media/ladder';
import type { LadderSpec, OutputPackage, OutputSpec } from '../media/output-spec';
import { DEFAULT_QUALITY, QUALITY_PRESETS, type Quality } from '../media/quality-presets';
import type { AudioOutputContainer, VideoOutputContainer } from '../media/media.types';
import type { JobApi } from './job-api';

export const RESOLUTIONS = { '720p': 720, '1080p': 1080, '2160p': 2160 } as const;
export type Resolution = keyof typeof RESOLUTIONS | 'source';
export const RESOLUTION_CHOICES: readonly Resolution[] = ['source', '720p', '1080p', '2160p'];

export const OUTPUT_PACKAGES: readonly OutputPackage[] = ['file', 'hls'];
/** A package's HDR codecs: HEVC always, AV1 beside it on request (`output.codecs`). */
export type HdrCodec = LadderSpec['hdrCodecs'][number];
export const HDR_CODECS: readonly HdrCodec[] = ['hevc', 'av1'];

export const VIDEO_CONTAINERS: readonly VideoOutputContainer[] = ['mp4', 'mov'];
export const AUDIO_CONTAINERS: readonly AudioOutputContainer[] = ['wav', 'm4a'];

/** The media type an output of each container is served as. */
export const OUTPUT_CONTENT_TYPES: Record<VideoOutputContainer | AudioOutputContainer, string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
};

export interface Sdr2HdrOutput {
  resolution: Resolution;
  /** Mastering display peak luminance (cd/m²), `expand`'s target; null for HLG, which has none. */
  peak_nits: number | null;
  container: VideoOutputContainer;
  /** Speed or fidelity of the encode (src/media/quality-presets.ts). */
  quality: Quality;
  /** Where SDR light goes (src/media/hdr-mapping.ts). */
  mapping: Mapping;
  transfer: Transfer;
  /**
   * The three package fields are stored for `hls` only: a file's options stay as they were before
   * packages existed (absent `package` is `file`, as in every job stored before).
   * `file`: one MP4/MOV; `hls`: a CMAF HLS package of the ladder's renditions (docs/ladder-plan.md).
   */
  package?: OutputPackage;
  /** The HDR rungs asked for, `[{height}]` (lines of the short side); null is the default ladder (ladder.ts). */
  ladder?: { height: number }[] | null;
  /** The HDR rungs' codecs: `["hevc"]` or `["hevc","av1"]`. */
  codecs?: HdrCodec[];
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
  sdr2hdr: {
    resolution: 'source',
    peak_nits: DEFAULT_HDR_ENCODE.peakNits,
    container: 'mp4',
    quality: DEFAULT_QUALITY,
    mapping: DEFAULT_HDR_ENCODE.mapping,
    transfer: DEFAULT_HDR_ENCODE.transfer,
    package: 'file',
  },
  audio: { target_lufs: -16, container: 'wav' },
};

/** The OpenAPI descriptions of `output.mapping` and `output.transfer`: what each choice does to the picture. */
export const MAPPING_DESCRIPTION =
  'Where the SDR light goes. `reference` (default): ITU-R BT.2408 placement, SDR 100 % white at 203 cd/m², ' +
  'the picture looks as the SDR source did (graphics and skin where BT.2408 puts them). `expand`: inverse tone ' +
  'mapping (ITU-R BT.2446-1 Method C): shadows, mid-tones and skin stay where `reference` puts them (18 % grey at ' +
  '24 cd/m², the brightest skin within ×1.45 up to 1000 cd/m² and ×1.95 from 4000), the range above is expanded so ' +
  'SDR white reaches 82 % of `peak_nits` (HLG: of 1000 cd/m²) and super-whites keep distinct light up to the peak. ' +
  'Same price.';
export const TRANSFER_DESCRIPTION =
  '`pq` (default): HDR10, SMPTE ST 2084 with ST 2086 mastering metadata and measured MaxCLL/MaxFALL. ' +
  '`hlg`: BT.2100 Hybrid Log-Gamma (HEVC Main10, BT.2020, arib-std-b67), SDR white at 75 % signal for ' +
  '`reference`; scene-referred, so it takes no `peak_nits`. Same price.';

/** A package's HDR codecs when the client names none. */
export const DEFAULT_HDR_CODECS: HdrCodec[] = ['hevc'];

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
      const transfer = given.transfer ?? defaults.transfer;
      // The body was refused when it named a ladder or codecs for a file (Sdr2HdrOutputDto).
      const hls = given.package === 'hls';
      return {
        api: 'sdr2hdr',
        output: {
          resolution: given.resolution ?? defaults.resolution,
          // The submit refused an explicit peak with HLG (Sdr2HdrOutputDto): HLG is relative to the display.
          peak_nits: transfer === 'hlg' ? null : (given.peak_nits ?? defaults.peak_nits),
          container: given.container ?? defaults.container,
          quality: given.quality ?? defaults.quality,
          mapping: given.mapping ?? defaults.mapping,
          transfer,
          ...(hls && {
            package: 'hls' as const,
            ladder: given.ladder?.map(({ height }) => ({ height })) ?? null,
            // HEVC first whatever the order asked: the codecs' order is the ladder's order.
            codecs: HDR_CODECS.filter((codec) => (given.codecs ?? DEFAULT_HDR_CODECS).includes(codec)),
          }),
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

/**
 * What the worker makes of a job's resolved options (src/media/output-spec.ts), stored with the job at
 * submit: the resolution's target lines, the quality's x265 setting, HLG's reference peak. The one place
 * an option becomes an encoder setting; migrations/1765610000000-job-output-spec.ts did the same in SQL
 * for the jobs stored before it.
 */
export function outputSpec(job: JobOutput, plan?: { maxOutputHeight: number }): OutputSpec {
  if (job.api === 'audio') {
    return { api: 'audio', container: job.output.container, targetLufs: job.output.target_lufs };
  }
  const { resolution, peak_nits: peakNits, container, quality, mapping, transfer } = job.output;
  const hls = job.output.package === 'hls';
  if (hls && !job.output.ladder && !plan) throw new Error("the default ladder is cut at the plan's largest output");
  if (transfer === 'pq' && peakNits === null) throw new Error('a PQ output resolved without its peak_nits');
  return {
    api: 'sdr2hdr',
    container,
    targetLines: targetLines(resolution) ?? null,
    mapping,
    transfer,
    // HLG has no mastering peak: `expand` reaches the HLG reference display's (hdr-mapping.ts expandPeak).
    peakNits: transfer === 'hlg' || peakNits === null ? HLG_DISPLAY_PEAK_NITS : peakNits,
    quality,
    ...QUALITY_PRESETS[quality],
    package: hls ? 'hls' : 'file',
    // The default ladder stops at the plan's largest output, so a default is never refused by the plan.
    ladder: hls
      ? ladderSpec(
          job.output.ladder?.map(({ height }) => height) ?? null,
          job.output.codecs ?? DEFAULT_HDR_CODECS,
          plan?.maxOutputHeight ?? Infinity,
        )
      : null,
  };
}

/** The spec a worker makes a job's items by (jobs.output_spec); only jobs ended before it existed lack one. */
export function storedSpec(job: { id: string; output_spec: OutputSpec | null }): OutputSpec {
  if (!job.output_spec) throw new Error(`job ${job.id} has no output spec: it ended before specs were stored`);
  const spec = job.output_spec;
  // Specs stored before packages existed name none: they were files (src/media/output-spec.ts).
  return spec.api === 'sdr2hdr' && spec.package === undefined ? { ...spec, package: 'file', ladder: null } : spec;
}

/**
 * A stored job's options, typed by its API (the column was written by resolveOutput, and completed for
 * older jobs by the migrations: nothing is filled in here).
 */
export function storedOutput(job: { api: JobApi; output_options: OutputOptions }): JobOutput {
  return { api: job.api, output: job.output_options } as JobOutput;
}

export type OutputPicture =
  { output_width: number; output_height: number } | { output_width: null; output_height: null };

/**
 * The picture an item will produce, as the worker encodes it (src/media/output-geometry.ts outputSize):
 * the requested lines on the short side, never upscaling the source; null without a picture (audio).
 */
export function outputPicture(job: JobOutput, source: { width: number | null; height: number | null }): OutputPicture {
  const size = job.api === 'sdr2hdr' ? outputDimensions(source, job.output.resolution) : null;
  return size ? { output_width: size.width, output_height: size.height } : { output_width: null, output_height: null };
}

/** The output picture's sides at `resolution` (outputPicture); null without a picture size. */
export function outputDimensions(
  source: { width: number | null; height: number | null },
  resolution: Resolution,
): { width: number; height: number } | null {
  return knownOutputSize(source, targetLines(resolution) ?? null);
}

/**
 * The lines a resolution asks for, on the short side (the worker's downscale target); undefined for
 * `source`, which keeps the source's size (its sides rounded down to even).
 */
export function targetLines(resolution: Resolution): number | undefined {
  return resolution === 'source' ? undefined : RESOLUTIONS[resolution];
}

/**
 * The pixels of a 16:9 picture with `lines` on its short side: what "720p", "1080p" and "2160p" stand for
 * as an amount of work (1080 → 1920×1080 = 2,073,600). Prices and the plan's largest output are judged
 * on an output's pixels against these (docs/api-guide.md, "Pictures are priced by their pixels"), so a
 * picture costs and is allowed what its work is, however it is turned or stretched.
 */
export function resolutionPixels(lines: number): number {
  return Math.round((lines * 16) / 9) * lines;
}

/** The pixels of the picture an item will produce (outputPicture); 0 without a picture size. */
export function outputPixels(source: { width: number | null; height: number | null }, resolution: Resolution): number {
  const size = outputDimensions(source, resolution);
  return size ? size.width * size.height : 0;
}
