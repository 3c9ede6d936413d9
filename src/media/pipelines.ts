// The worker's door to the media pipelines: each lives in its own module (hdr-pipeline.ts,
// loudness-pipeline.ts) over what they share (pipeline-outcome.ts); callers import them from here.
export {
  convertSdrToHdr,
  readOutputLight,
  withinMasteringPeak,
  type OutputLight,
  type SdrToHdrRequest,
  type SdrToHdrSuccess,
} from './hdr-pipeline';
export {
  LIMITER_AIM_LU,
  normaliseSpeechLoudness,
  type SpeechLoudnessRequest,
  type SpeechLoudnessSuccess,
} from './loudness-pipeline';
export { parseEbur128Summary, parseLoudnormReport, type LoudnessReport, type LoudnormReport } from './loudness-reports';
export {
  encodeCeiling,
  failure,
  processFailure,
  type PipelineFailure,
  type PipelineRunOptions,
} from './pipeline-outcome';
