// A MediaRunner for tests that makes each output for real (FfmpegMediaRunner) and then, for the items it
// is told to, replaces it with a real but wrong file — SDR tags, a dropped frame, a frame held too long,
// a blurred picture, the wrong loudness, a click above the true-peak limit, trailing silence. Its checks
// are the real ones: the worker's ending must find each wrong file and fail its item, charged 0.
import { Test } from '@nestjs/testing';
import { execFile } from 'node:child_process';
import { rename } from 'node:fs/promises';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { APP_CONFIG, parseConfig, type AppConfig } from '../../src/common/config/config';
import { FfmpegMediaRunner } from '../../src/processing/ffmpeg-media-runner';
import { MEDIA_RUNNER, type RunItemRequest, type RunItemResult } from '../../src/processing/media-runner';
import { WorkerModule } from '../../src/worker.module';
import type { TestWorker } from './worker';

const run = promisify(execFile);

export type WrongOutput =
  'sdr_tags' | 'dropped_frame' | 'held_frame' | 'blurred' | 'quiet' | 'click' | 'trailing_silence';

const HDR10 = [
  '-c:v',
  'libx265',
  '-preset',
  'ultrafast',
  '-crf',
  '12',
  '-profile:v',
  'main10',
  '-pix_fmt',
  'yuv420p10le',
  '-tag:v',
  'hvc1',
  '-color_primaries',
  'bt2020',
  '-color_trc',
  'smpte2084',
  '-colorspace',
  'bt2020nc',
  '-color_range',
  'tv',
  '-x265-params',
  'log-level=error:hdr10=1:repeat-headers=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:range=limited:' +
    'master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=203,203',
];
const SDR = ['-c:v', 'libx265', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-x265-params', 'log-level=error'];
const SDR_TAGS = ['-color_primaries', 'bt709', '-color_trc', 'bt709', '-colorspace', 'bt709'];

/** ffmpeg arguments that turn a good output into the wrong one (`frames`: the good output's frame count). */
function wrongArgs(kind: WrongOutput, frames: number): string[] {
  switch (kind) {
    case 'sdr_tags':
      return ['-map', '0', '-c:a', 'copy', '-vf', 'format=yuv420p', ...SDR, ...SDR_TAGS];
    case 'dropped_frame':
      return ['-map', '0', '-c:a', 'copy', '-vf', `select='not(eq(n\\,3))',setpts=N/FRAME_RATE/TB`, ...HDR10];
    case 'held_frame':
      // The last frame shown half a second late: the same frames, the stream half a second too long.
      return [
        '-map',
        '0',
        '-c:a',
        'copy',
        '-vf',
        `setpts=PTS+gte(N\\,${frames - 1})*0.5/TB`,
        '-fps_mode',
        'vfr',
        ...HDR10,
      ];
    case 'blurred':
      return ['-map', '0', '-c:a', 'copy', '-vf', 'boxblur=8:2', ...HDR10];
    case 'quiet':
      return ['-af', 'volume=-6dB', '-c:a', 'pcm_s16le'];
    case 'click':
      return [
        '-filter_complex',
        "[0:a]aformat=sample_fmts=fltp[a];aevalsrc='if(between(t\\,0.5\\,0.502)\\,0.99*sin(2*PI*3000*t)\\,0)':s=48000:d=0.6[c];" +
          '[a][c]amix=inputs=2:duration=first:normalize=0',
        '-c:a',
        'pcm_s16le',
      ];
    case 'trailing_silence':
      return ['-af', 'apad=pad_dur=1', '-c:a', 'pcm_s16le'];
  }
}

export class WrongOutputRunner extends FfmpegMediaRunner {
  /** Which outputs to spoil, by item index (read from the output's path, out-<index>). */
  readonly spoil = new Map<number, WrongOutput>();

  override async run(request: RunItemRequest): Promise<RunItemResult> {
    const made = await super.run(request);
    const index = Number(/^out-(\d+)$/.exec(basename(request.outputPath))?.[1]);
    const kind = this.spoil.get(index);
    if (!made.ok || !kind) return made;
    // A package: its first rung (HEVC) is the one spoiled, as the checks read it (its joined segments).
    const path = made.package ? made.package.renditions[0].joinedPath : made.path;
    await spoilFile(path, made.package ? 'mp4' : made.container, kind);
    return made;
  }
}

/** Replaces the file at `path` with the wrong one made from it. */
async function spoilFile(path: string, container: string, kind: WrongOutput): Promise<void> {
  const frames = await countFrames(path);
  const good = `${path}.good.${container}`;
  await rename(path, good);
  await run('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    '-i',
    good,
    ...wrongArgs(kind, frames),
    path,
  ]);
}

async function countFrames(path: string): Promise<number> {
  const { stdout } = await run(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-count_packets'].concat([
      '-show_entries',
      'stream=nb_read_packets',
      '-of',
      'csv=p=0',
      path,
    ]),
  );
  // The first line: an HDR10 stream's side data follows on lines of its own.
  return Number.parseInt(stdout.trim().split('\n')[0], 10) || 0;
}

/** A real worker whose media runner is a WrongOutputRunner (everything else as production). */
export async function startWorkerWithWrongOutputs(
  overrides: Record<string, string>,
): Promise<TestWorker & { runner: WrongOutputRunner }> {
  const config = parseConfig({ ...process.env, ...overrides });
  let runner: WrongOutputRunner | undefined;
  const moduleRef = await Test.createTestingModule({ imports: [WorkerModule.forRoot(config)] })
    .overrideProvider(MEDIA_RUNNER)
    .useFactory({
      factory: (appConfig: AppConfig) => (runner = new WrongOutputRunner(appConfig)),
      inject: [APP_CONFIG],
    })
    .compile();
  moduleRef.useLogger(false);
  await moduleRef.init();
  if (!runner) throw new Error('the worker did not create its media runner');
  return { app: moduleRef, config, runner, close: () => moduleRef.close() };
}
