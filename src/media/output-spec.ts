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
