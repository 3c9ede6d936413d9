// A real HLS package, made and stored the way the ladder worker will (docs/ladder-plan.md step 4), for the
// tests of what reads one (playback route, job view, dashboard player, CLI download) until that worker
// lands: bare ffmpeg's hls muxer (CMAF, VOD) encodes a short clip into the layout of packagePrefix
// (master.m3u8; h264-180-sdr/, av1-180-pq/, hevc-180-pq/, audio/), its files go into the API's storage, and
// the item ends through the real JobLifecycle with the package's asset (container 'hls', storage_key = the
// prefix, media.renditions as the job view's renditions[]). Replace with a real job once the worker makes
// packages.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { STORAGE, packagePrefix, type Storage } from '../../src/common/storage/storage';
import { JobLifecycle } from '../../src/jobs/job-lifecycle';
import { fixtureDir, sdrMp4 } from '../fixtures/media';
import type { TestApi } from './app';

const run = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';
const SECONDS = 3;
const SEGMENT_SECONDS = 1;
const FPS = 30;

/** One rendition of the test package: its folder, and what the job view shows of it. */
export interface TestRendition {
  folder: string;
  codec: 'h264' | 'hevc' | 'av1';
  codecs: string;
  video_range: 'SDR' | 'PQ';
  encode: string[];
}

export const TEST_RENDITIONS: TestRendition[] = [
  {
    folder: 'h264-180-sdr',
    codec: 'h264',
    codecs: 'avc1.64001e',
    video_range: 'SDR',
    encode: [
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-level', '3.0', '-pix_fmt', 'yuv420p'],
      ...['-g', String(FPS), '-keyint_min', String(FPS), '-sc_threshold', '0'],
      ...['-color_primaries', 'bt709', '-color_trc', 'bt709', '-colorspace', 'bt709'],
    ],
  },
  {
    folder: 'av1-180-pq',
    codec: 'av1',
    codecs: 'av01.0.00M.10.0.110.09.16.09.0',
    video_range: 'PQ',
    encode: [
      ...['-vf', 'format=yuv420p10le', '-c:v', 'libsvtav1', '-preset', '10', '-g', String(FPS)],
      ...['-svtav1-params', `keyint=${FPS}`],
      ...['-color_primaries', 'bt2020', '-color_trc', 'smpte2084', '-colorspace', 'bt2020nc'],
    ],
  },
  {
    folder: 'hevc-180-pq',
    codec: 'hevc',
    codecs: 'hvc1.2.4.L60.90',
    video_range: 'PQ',
    encode: [
      ...['-vf', 'format=yuv420p10le', '-c:v', 'libx265', '-preset', 'ultrafast', '-tag:v', 'hvc1'],
      ...['-x265-params', `keyint=${FPS}:min-keyint=${FPS}:scenecut=0:log-level=error`],
      ...['-color_primaries', 'bt2020', '-color_trc', 'smpte2084', '-colorspace', 'bt2020nc'],
    ],
  },
];

const HLS = [
  ...['-f', 'hls', '-hls_segment_type', 'fmp4', '-hls_playlist_type', 'vod', '-hls_time', String(SEGMENT_SECONDS)],
  ...['-hls_flags', 'independent_segments', '-hls_fmp4_init_filename', 'init.mp4'],
];

export interface LocalPackage {
  dir: string;
  /** Every file of the package, relative to its folder (`master.m3u8`, `h264-180-sdr/seg-00000.m4s`…). */
  files: string[];
  sizeBytes: number;
  renditions: Record<string, unknown>[];
}

async function ffmpeg(args: string[]): Promise<void> {
  await run(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], { maxBuffer: 16 << 20 });
}

async function folderBytes(dir: string, match: RegExp): Promise<number[]> {
  const names = (await readdir(dir)).filter((name) => match.test(name)).sort();
  return Promise.all(names.map(async (name) => (await stat(join(dir, name))).size));
}

/** bits/s: the peak over segments (BANDWIDTH) and the mean (AVERAGE-BANDWIDTH), as RFC 8216 §4.3.4.2 asks. */
async function measuredBandwidth(dir: string): Promise<{ peak: number; average: number; segments: number }> {
  const sizes = await folderBytes(dir, /^seg-\d+\.m4s$/);
  const init = (await stat(join(dir, 'init.mp4'))).size;
  const bits = sizes.map((size) => (size * 8) / SEGMENT_SECONDS);
  return {
    peak: Math.ceil(Math.max(...bits) + (init * 8) / SECONDS),
    average: Math.ceil((sizes.reduce((sum, size) => sum + size, 0) * 8) / SECONDS),
    segments: sizes.length,
  };
}

let made: Promise<LocalPackage> | undefined;

/**
 * The package, made once for all runs in the media fixture cache (a folder named by a hash of its recipe,
 * written under a temporary name and renamed, like test/fixtures/media.ts's files).
 */
export function localPackage(): Promise<LocalPackage> {
  made ??= cachedPackage();
  return made;
}

async function cachedPackage(): Promise<LocalPackage> {
  const source = await sdrMp4({ seconds: SECONDS });
  const recipe = JSON.stringify([basename(source), SECONDS, SEGMENT_SECONDS, HLS, TEST_RENDITIONS, MASTER_VERSION]);
  const name = `hls-package-${createHash('sha256').update(recipe).digest('hex').slice(0, 16)}`;
  const dir = join(fixtureDir(), name);
  if (!existsSync(join(dir, 'master.m3u8'))) {
    const partial = join(fixtureDir(), `partial-${randomUUID()}-${name}`);
    await makePackage(source, partial);
    try {
      await rename(partial, dir);
    } catch {
      // Another process made it meanwhile: keep theirs.
      await rm(partial, { recursive: true, force: true });
    }
  } else {
    // Marks it used, as test/fixtures/media.ts does its files: the cache's clean-up removes what is
    // unused for two weeks, and a folder's time does not move when its files are read.
    const now = new Date();
    await utimes(dir, now, now);
  }
  return describePackage(dir);
}

/** Bumped when the master playlist this file writes changes (the recipe above does not cover it). */
const MASTER_VERSION = 1;

async function makePackage(source: string, dir: string): Promise<void> {
  await mkdir(dir);
  for (const rendition of [...TEST_RENDITIONS.map((r) => r.folder), 'audio']) await mkdir(join(dir, rendition));
  // One after another: the machine's two cores are shared.
  for (const rendition of TEST_RENDITIONS) {
    const out = join(dir, rendition.folder);
    await ffmpeg([
      ...['-i', source, '-an', ...rendition.encode, ...HLS],
      ...['-hls_segment_filename', join(out, 'seg-%05d.m4s'), join(out, 'playlist.m3u8')],
    ]);
  }
  await ffmpeg([
    ...['-i', source, '-vn', '-c:a', 'aac', '-b:a', '128k', ...HLS],
    ...['-hls_segment_filename', join(dir, 'audio', 'seg-%05d.m4s'), join(dir, 'audio', 'playlist.m3u8')],
  ]);
  const audio = await measuredBandwidth(join(dir, 'audio'));
  const renditions: Record<string, unknown>[] = [];
  const master = [
    '#EXTM3U',
    '#EXT-X-VERSION:7',
    '#EXT-X-INDEPENDENT-SEGMENTS',
    '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Main",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="1",URI="audio/playlist.m3u8"',
  ];
  for (const rendition of TEST_RENDITIONS) {
    const video = await measuredBandwidth(join(dir, rendition.folder));
    const hdr = rendition.video_range !== 'SDR';
    renditions.push({
      codec: rendition.codec,
      width: 320,
      height: 180,
      transfer: hdr ? 'smpte2084' : 'bt709',
      video_range: rendition.video_range,
      bandwidth: video.peak + audio.peak,
      average_bandwidth: video.average + audio.average,
      frame_rate: FPS,
      segments: video.segments,
      duration_seconds: SECONDS,
      light: hdr ? { mapping: 'reference', mastering_peak_nits: 1000, max_cll: 203, max_fall: 120 } : null,
    });
    master.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${video.peak + audio.peak},AVERAGE-BANDWIDTH=${video.average + audio.average},` +
        `CODECS="${rendition.codecs},mp4a.40.2",RESOLUTION=320x180,FRAME-RATE=${FPS.toFixed(3)},` +
        `VIDEO-RANGE=${rendition.video_range},AUDIO="audio"`,
      `${rendition.folder}/playlist.m3u8`,
    );
  }
  await writeFile(join(dir, 'master.m3u8'), `${master.join('\n')}\n`);
  await writeFile(join(dir, 'renditions.json'), JSON.stringify(renditions));
}

async function describePackage(dir: string): Promise<LocalPackage> {
  const files = ['master.m3u8'];
  for (const folder of [...TEST_RENDITIONS.map((r) => r.folder), 'audio'])
    files.push(...(await readdir(join(dir, folder))).sort().map((name) => `${folder}/${name}`));
  let sizeBytes = 0;
  for (const file of files) sizeBytes += (await stat(join(dir, file))).size;
  const renditions = JSON.parse(await readFile(join(dir, 'renditions.json'), 'utf8')) as Record<string, unknown>[];
  return { dir, files, sizeBytes, renditions };
}

/** Stores the package's files under `prefix` in the API's storage backend. */
export async function storePackage(storage: Storage, prefix: string, pkg: LocalPackage): Promise<void> {
  for (const file of pkg.files) {
    await storage.write(`${prefix}${file}`, createReadStream(join(pkg.dir, file)), 64 << 20);
  }
}

/**
 * Ends item `index` of a submitted (queued, untaken) job as the ladder worker will: the package stored under
 * packagePrefix and the item succeeded with its asset, charged its estimate. Returns the package's asset id.
 */
export async function finishWithPackage(api: TestApi, jobId: string, index = 0): Promise<string> {
  const lifecycle = api.app.get(JobLifecycle);
  const taken = await lifecycle.takeItem(jobId, index, 'wkr_testpackager');
  if (!taken) throw new Error(`job ${jobId} item ${index} could not be taken`);
  const pkg = await localPackage();
  const prefix = packagePrefix(taken.job.account_id, jobId, index);
  await storePackage(api.app.get<Storage>(STORAGE), prefix, pkg);
  const ended = await lifecycle.endItems(taken.job, [
    {
      index,
      status: 'succeeded',
      chargedCredits: Number(taken.item.estimated_credits),
      processedSeconds: SECONDS,
      error: null,
      asset: {
        storageKey: prefix,
        sizeBytes: pkg.sizeBytes,
        container: 'hls',
        contentType: 'application/vnd.apple.mpegurl',
        media: { renditions: pkg.renditions },
      },
      checks: [],
    },
  ]);
  if (!ended.itemsEnded.includes(index)) throw new Error(`job ${jobId} item ${index} did not end`);
  const [asset] = (await api.app
    .get(DataSource)
    .query(`SELECT id FROM assets WHERE job_id = $1 AND item_index = $2 AND container = 'hls'`, [jobId, index])) as {
    id: string;
  }[];
  return asset.id;
}
