// What the worker makes of one job's items, every choice resolved: the submit turns the client's
// `output` (the API's words, defaults filled in) into this spec once and stores it with the job
// (jobs.output_spec), and the worker and the pipelines read it as it is. No layer below the submit
// applies a default of its own, so a default changed later never changes a job already accepted.
// Values only: the API loads it.
import type { X265Preset } from './encoder-settings';
import type { Mapping, Transfer } from './hdr-mapping';
import type { AudioOutputContainer, VideoOutputContainer } from './media.types';
import type { Quality } from './quality-presets';

export interface HdrOutputSpec {
  container: VideoOutputContainer;
  /**
   * Lines of the picture's short side to scale down to (720, 1080, 2160: 720 means 1280×720 landscape and
   * 720×1280 portrait; output-geometry.ts); null keeps the source's size (sides rounded down to even).
   */
  targetLines: number | null;
  /** Where SDR light goes (hdr-mapping.ts). */
  mapping: Mapping;
  transfer: Transfer;
  /**
   * PQ: the ST 2086 mastering peak (cd/m²), which `expand` reaches. HLG has no mastering peak: the HLG
   * reference display's (HLG_DISPLAY_PEAK_NITS), which is what `expand` reaches there.
   */
  peakNits: number;
  /** The customer's speed/fidelity choice, kept for the output checks' bar and the output's description. */
  quality: Quality;
  /** The x265 setting `quality` stood for at submit (quality-presets.ts). */
  preset: X265Preset;
  crf: number;
  /**
   * `file`: one MP4 (as before packages existed). `hls`: a CMAF HLS package (docs/ladder-plan.md), whose
   * renditions `ladder` lists, every one resolved at submit. Specs stored before packages existed have no
   * `package`: the one place that reads a stored spec (jobs.output_spec) reads that as `file`.
   */
  package: OutputPackage;
  /** The package's ladder, resolved at submit; null for `file`. */
  ladder: LadderSpec | null;
}

export type OutputPackage = 'file' | 'hls';

/** HLS's VIDEO-RANGE of a rendition: the HDR rungs carry the job's transfer, the SDR rungs the source's range. */
export type VideoRange = 'PQ' | 'HLG' | 'SDR';

/** One rendition of an item's package (ladder.ts itemRungs): its codec, range, picture and target bitrate. */
export interface RungSpec {
  /** `hevc`: HEVC Main10 `hvc1` (HDR); `av1`: SVT-AV1 10-bit (HDR); `h264`: H.264 High, BT.709 (SDR, from the source). */
  codec: 'hevc' | 'av1' | 'h264';
  range: VideoRange;
  /** Output picture, both sides even, never above the source's. */
  width: number;
  height: number;
  /** The encoder's target (kbit/s); the master playlist publishes what the segments measure. */
  bitrateKbps: number;
}

export interface LadderSpec {
  /** Every rendition's segment length (s): a fixed GOP of this length keeps all rungs' boundaries aligned. */
  segmentSeconds: number;
  /**
   * Lines (short side) of the HDR rungs, resolved at submit: the client's `output.ladder`, or the default
   * ladder (ladder.ts DEFAULT_HDR_LINES). Each item keeps those at or below its source (ladder.ts itemRungs).
   */
  hdrLines: number[];
  /**
   * At most this many of `hdrLines` per item, the highest at or below its source: the default ladder's
   * cut (ladder.ts DEFAULT_HDR_RUNGS), so one stored list gives each source its own default. Absent for
   * a client's ladder, whose every line at or below the source is made.
   */
  maxHdrRungs?: number;
  /** The HDR rungs' codecs (`output.codecs`): every HDR line is made in each. */
  hdrCodecs: Array<'hevc' | 'av1'>;
  /** The one AAC audio group's bitrate (kbit/s); an item whose source has no audio gets no audio group. */
  audioKbps: number;
}

export interface LoudnessOutputSpec {
  container: AudioOutputContainer;
  /** Target integrated loudness of the speech (LUFS). */
  targetLufs: number;
}

export interface OutputSpecOf {
  sdr2hdr: HdrOutputSpec;
  audio: LoudnessOutputSpec;
}

/** A job's spec with its API: narrowing on `api` gives the right spec. */
export type OutputSpec = { [A in keyof OutputSpecOf]: { api: A } & OutputSpecOf[A] }[keyof OutputSpecOf];
