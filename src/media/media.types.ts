// Types shared by the media layer (probe, argv builders, pipelines). No runtime code, no NestJS.

/** The job kinds that run media pipelines (same strings as the public API's `api`). */
export type MediaApi = 'sdr2hdr' | 'audio';

/** Containers we accept, told apart by ISO-BMFF brand rather than by file extension. */
export type InputContainer = 'mp4' | 'mov' | 'm4a' | 'wav';

export type VideoOutputContainer = 'mp4' | 'mov';
export type AudioOutputContainer = 'wav' | 'm4a';

export interface VideoStreamInfo {
  /** Absolute stream index in the input, so argv builders map exactly the stream that was judged. */
  index: number;
  codec: string;
  width: number;
  height: number;
  fps: number | null;
  /** ffprobe's colour tags; null when the input is untagged ("unknown"/"unspecified" or absent). */
  colorPrimaries: string | null;
  colorTransfer: string | null;
  colorSpace: string | null;
  colorRange: string | null;
  pixFmt: string | null;
}

export interface AudioStreamInfo {
  index: number;
  codec: string;
  sampleRate: number;
  channels: number;
}

export interface ProbeResult {
  container: InputContainer;
  /** ffprobe's `format_name`, kept for logs. */
  formatName: string;
  durationSeconds: number;
  video?: VideoStreamInfo;
  audio?: AudioStreamInfo;
  /**
   * CENC/DRM-encrypted streams. Only true when the caller asked for encrypted input to be let through
   * (submit accepts it so the job fails as drm_protected in the worker, refunded); otherwise the probe
   * already answered drm_protected.
   */
  encrypted: boolean;
}

/** Catalogue codes a probe can end with (a subset of src/common/errors/catalogue.ts, kept literal so this layer stays standalone). */
export type ProbeErrorCode =
  | 'invalid_media'
  | 'unsupported_format'
  | 'unsupported_codec'
  | 'duration_exceeded'
  | 'drm_protected'
  | 'out_of_memory'
  /** A network source that could not be read (refused, 4xx/5xx, DNS, read timeout). */
  | 'invalid_url'
  /** The probe of a local file ran past its time limit (a busy machine, not a verdict on the media). */
  | 'timeout';

export type ProbeOutcome =
  { ok: true; probe: ProbeResult } | { ok: false; code: ProbeErrorCode; message: string; param?: string };

/** Catalogue codes a pipeline run can end with. */
export type PipelineErrorCode =
  | 'drm_protected'
  | 'no_speech_detected'
  | 'timeout'
  | 'job_cancelled'
  | 'out_of_memory'
  | 'processing_failed'
  | 'source_changed';
