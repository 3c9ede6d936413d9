// The media layer of the processing pipeline: plain functions, no NestJS. The worker wraps them
// (config → options, item → request, result → item status and catalogue code).
export * from './media.types';
export {
  buildGainLimiterArgs,
  buildHdrFilter,
  buildLoudnessMeasureArgs,
  buildLoudnormArgs,
  buildPcmExtractArgs,
  buildProbeArgs,
  buildSdrToHdrArgs,
  buildX265Params,
  canNormaliseLinearly,
  DEFAULT_PEAK_NITS,
  DEFAULT_X265_CRF,
  DEFAULT_X265_PRESET,
  downscaleSize,
  outputSize,
  X265_PRESETS,
  type LoudnessMeasurement,
  type X265Preset,
} from './ffmpeg-args';
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
