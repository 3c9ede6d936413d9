// The media layer of the processing pipeline: plain functions, no NestJS. The worker wraps them
// (config → options, item → request, result → item status and catalogue code).
export * from './media.types';
export {
  DEFAULT_PEAK_NITS,
  DEFAULT_X265_CRF,
  DEFAULT_X265_PRESET,
  X265_PRESETS,
  type X265Preset,
} from './encoder-settings';
export { buildHdrFilter, buildSdrToHdrArgs, buildX265Params } from './hdr-args';
export {
  buildGainLimiterArgs,
  buildLoudnessMeasureArgs,
  buildLoudnormArgs,
  buildPcmExtractArgs,
  canNormaliseLinearly,
  type LoudnessMeasurement,
} from './loudness-args';
export { downscaleSize, outputSize } from './output-geometry';
export { buildProbeArgs } from './probe-args';
export { scanIsoBmff, type IsoBmffScan } from './iso-bmff';
export { readMediainfoHdr, type MediainfoVideoHdr } from './mediainfo';
export {
  convertSdrToHdr,
  normaliseSpeechLoudness,
  type PipelineFailure,
  type PipelineRunOptions,
  type SdrToHdrRequest,
  type SdrToHdrSuccess,
  type SpeechLoudnessRequest,
  type SpeechLoudnessSuccess,
} from './pipelines';
export { classifyProbe, probeMedia, type ProbeOptions, type ProbeRules } from './probe';
export {
  defaultFfmpegPath,
  defaultFfprobePath,
  runFfmpeg,
  runMediaProcess,
  type MediaProcessResult,
  type MediaProcessStatus,
  type RunFfmpegResult,
} from './run-ffmpeg';
export { detectSpeech, VoiceActivityDetector, type VadOptions, type VadResult } from './vad';
