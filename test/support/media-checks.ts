import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROUND_TRIP_SAMPLES, type RoundTripInRun } from '../../src/media/output-checks';
import { measureSourceVideo, measureVideo, roundTripSsim } from '../../src/media/output-measure';
import { sampleEvery } from '../../src/media/round-trip';

const exec = promisify(execFile);

/** What ffprobe says of a file's first video stream: codec, pixel format and colour tags. */
export async function probeVideoStream(file: string): Promise<Record<string, string>> {
  const { stdout } = await exec(process.env.FFPROBE_PATH || 'ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=codec_name,pix_fmt,color_space,color_transfer,color_primaries',
    '-of',
    'json',
    file,
  ]);
  return JSON.parse(stdout).streams[0];
}

/**
 * Frames a decoder reads from a file's first video stream. JSON, not csv: an HDR10 file's stream carries
 * side data (its `clli`/`mdcv` boxes), which ffprobe's csv writer prints as extra lines.
 */
export async function decodedFrameCount(file: string): Promise<number> {
  const { stdout } = await exec(process.env.FFPROBE_PATH || 'ffprobe', [
    ...['-v', 'error', '-count_frames', '-select_streams', 'v:0'],
    ...['-show_entries', 'stream=nb_read_frames', '-of', 'json', file],
  ]);
  return Number(JSON.parse(stdout).streams[0].nb_read_frames);
}

/**
 * The round trip the output check measures of a PQ file, from the file itself (output-measure.ts
 * roundTripSsim), as the record a run's own measurement must equal to stand in for it (RoundTripInRun).
 */
export async function roundTripOfFile(
  output: string,
  source: string,
  choice: RoundTripInRun['choice'],
): Promise<RoundTripInRun> {
  const [video, sourceVideo] = await Promise.all([measureVideo(output, {}), measureSourceVideo(source, false, {})]);
  const ssim = await roundTripSsim({
    output,
    source,
    concat: false,
    sourceVideo,
    outputSize: video,
    choice,
    samples: ROUND_TRIP_SAMPLES,
  });
  return {
    ssim,
    source,
    every: sampleEvery(video.frames, ROUND_TRIP_SAMPLES),
    outputSize: { width: video.width, height: video.height },
    sourceSize: { width: sourceVideo.width, height: sourceVideo.height },
    choice,
  };
}
