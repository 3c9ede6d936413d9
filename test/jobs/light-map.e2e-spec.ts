// The light map of an sdr2hdr item (docs/api-decisions.md §12) through the real API, a worker, ffmpeg and
// the local object store: a PNG behind `items[i].output.light_map_url`, fetched through its signed link
// and decoded here — reference and expand put the light visibly elsewhere (the share of the output half
// in the bands at and above 400 cd/m²) — one per item also when the item was encoded in segments, its
// light_map_frame_seconds the output's keyframe nearest the middle, the map drawn with the run's own probe of
// the source the same as one that probes the source again, and retention and the storage sweeper
// remove it with the output.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { LEGEND_HEIGHT, LIGHT_BANDS } from '../../src/media/light-map';
import { FfmpegMediaRunner } from '../../src/processing/ffmpeg-media-runner';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { StorageSweeper } from '../../src/processing/storage-sweeper';
import { keyframedSdrMp4, LIGHT_PATTERN, lightPatternMp4, untaggedMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack, type TestWorker } from '../support/worker';

const exec = promisify(execFile);

/** A PNG decoded to RGB bytes (ffmpeg), with its size. */
async function decodePng(path: string): Promise<{ width: number; height: number; rgb: Buffer }> {
  const { stdout } = await exec(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height,codec_name', '-of', 'json', path],
    { encoding: 'utf8' },
  );
  const stream = JSON.parse(stdout).streams[0];
  expect(stream.codec_name).toBe('png');
  const raw = await exec('ffmpeg', ['-v', 'error', '-i', path, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], {
    encoding: 'buffer',
    maxBuffer: 1 << 28,
  });
  return { width: stream.width, height: stream.height, rgb: raw.stdout };
}

/** Of the output half of the map (right, above the legend): the share of pixels in each band. */
function bandShares(png: { width: number; height: number; rgb: Buffer }): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(LIGHT_BANDS.map((band) => [band.label, 0]));
  const half = png.width / 2;
  const rows = png.height - LEGEND_HEIGHT;
  for (let y = 0; y < rows; y++) {
    for (let x = half; x < png.width; x++) {
      const at = (y * png.width + x) * 3;
      // The LUT's colours pass a 16-bit → 8-bit conversion: a channel may be off by a code or two.
      const band = LIGHT_BANDS.find((b) =>
        [0, 1, 2].every((c) => Math.abs(png.rgb[at + c] - parseInt(b.colour.slice(2 * c, 2 * c + 2), 16)) <= 3),
      );
      if (band) counts[band.label]++;
    }
  }
  return Object.fromEntries(Object.entries(counts).map(([label, n]) => [label, n / (half * rows)]));
}

const TOP_BANDS = LIGHT_BANDS.filter((band) => band.below > 400).map((band) => band.label);
const topShare = (shares: Record<string, number>) => TOP_BANDS.reduce((sum, label) => sum + shares[label], 0);

describe('the light map of an sdr2hdr item', () => {
  let api: TestApi;
  let worker: TestWorker;
  let close: () => Promise<void>;
  let db: DataSource;
  let dir: string;
  let account: TestAccount;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-light-map-'));
    // Items of 2 s or more are encoded in segments of 1 s: the 4 s clip below is segmented, the 1 s ones are not.
    ({ api, worker, close } = await startStack({ REGION: 'lightmap', STORAGE_DIR: dir, SEGMENT_SECONDS: '1' }));
    db = api.app.get(DataSource);
    account = await createAccount(api, { credits: 5000 });
  }, 120_000);
  afterAll(async () => {
    await close?.();
    await rm(dir, { recursive: true, force: true });
  });

  async function run(path: string, output: object): Promise<any> {
    const uploadId = await upload(api, account.apiKey, path);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, undefined, 240_000);
    expect(job.status).toBe('succeeded');
    return job;
  }

  /** The light map through its signed link (no API key), as a client or the dashboard's <img> gets it. */
  async function fetchMap(item: any, name: string) {
    expect(item.output.light_map_url).toMatch(/\/v1\/assets\/ast_[^/]+\/content\?expires=\d+&signature=/);
    expect(item.output.light_map_url).not.toBe(item.output.url);
    expect(Date.parse(item.output.light_map_expires_at)).toBeGreaterThan(Date.now());
    expect(item.output).not.toHaveProperty('light_map_asset_id');
    const response = await fetch(item.output.light_map_url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    const path = join(dir, `${name}.png`);
    await writeFile(path, Buffer.from(await response.arrayBuffer()));
    return decodePng(path);
  }

  /** The job's objects in the local store. */
  async function storedObjects(jobId: string): Promise<string[]> {
    const folder = join(worker.config.storageDir, 'outputs', account.accountId, jobId);
    return existsSync(folder) ? (await readdir(folder)).sort() : [];
  }

  it('reference and expand each give a PNG of source and output side by side; expand puts light in the top bands, reference none', async () => {
    const clip = await lightPatternMp4();
    const reference = await run(clip, { mapping: 'reference' });
    const expand = await run(clip, { mapping: 'expand', peak_nits: 1000 });

    const shares: Record<string, Record<string, number>> = {};
    for (const [name, job] of [
      ['reference', reference],
      ['expand', expand],
    ] as const) {
      const png = await fetchMap(job.items[0], name);
      // The source frame and the output frame side by side, the legend below.
      expect(png).toMatchObject({ width: 2 * LIGHT_PATTERN.width, height: LIGHT_PATTERN.height + LEGEND_HEIGHT });
      shares[name] = bandShares(png);
    }
    process.stdout.write(`light map band shares: ${JSON.stringify(shares)}\n`);
    // BT.2408 placement: white at ~203 cd/m², nothing reaches 400.
    expect(topShare(shares.reference)).toBe(0);
    expect(shares.reference['150-400']).toBeGreaterThan(0.02);
    // Expanded: the white patch, the highlight and the top of the ramp land at 400 cd/m² and above.
    expect(topShare(shares.expand)).toBeGreaterThan(0.05);
    expect(shares.expand['800-1500']).toBeGreaterThan(0);
    // The shadows stay where they were: both maps are mostly the same dark band (the black background).
    expect(Math.abs(shares.expand['<1'] - shares.reference['<1'])).toBeLessThan(0.05);
  }, 480_000);

  it('a segmented item gets one light map, of the same frame layout', async () => {
    const job = await run(await keyframedSdrMp4({ width: 320, height: 180, seconds: 4, audio: false }), {});
    const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM item_segments WHERE job_id = $1`, [
      job.job_id,
    ]);
    expect(count).toBeGreaterThan(1);
    const png = await fetchMap(job.items[0], 'segmented');
    expect(png).toMatchObject({ width: 640, height: 180 + LEGEND_HEIGHT });
    // light_map_frame_seconds is the frame's time in the item, not in the middle segment it was taken from
    // (it said 0.5 s of a 4 s item, the middle of the third 1 s segment).
    const [segment] = await db.query(
      `SELECT start_seconds::float8 AS start, duration_seconds::float8 AS length FROM item_segments
        WHERE job_id = $1 ORDER BY segment OFFSET $2 LIMIT 1`,
      [job.job_id, Math.floor(count / 2)],
    );
    const at: number = job.items[0].output.light_map_frame_seconds;
    expect(at).toBeGreaterThanOrEqual(segment.start);
    expect(at).toBeLessThanOrEqual(segment.start + segment.length);
    expect(at).toBeGreaterThanOrEqual(0.1 * job.items[0].duration_seconds);
    expect(at).toBeLessThanOrEqual(0.9 * job.items[0].duration_seconds);
    // One output and one light map in the store for the item.
    const objects = await storedObjects(job.job_id);
    expect(objects.filter((name) => name.endsWith('.png'))).toHaveLength(1);
    expect(objects.filter((name) => name.endsWith('.mp4'))).toHaveLength(1);
  }, 480_000);

  it("the item's light map, drawn with the run's own probe of the source, is the one a fresh probe of the source gives", async () => {
    const clip = await lightPatternMp4();
    const job = await run(clip, { mapping: 'expand', peak_nits: 1000 });
    const stored = await fetchMap(job.items[0], 'from-run');
    const [mp4] = (await storedObjects(job.job_id)).filter((name) => name.endsWith('.mp4'));
    const output = join(worker.config.storageDir, 'outputs', account.accountId, job.job_id, mp4);
    // The same output and source drawn again here: the source probed by the light map itself (no sourceColour),
    // and with other colour tags given, which must change the picture (the tags given are the ones used).
    const runner = new FfmpegMediaRunner(worker.config);
    const draw = async (name: string, sourceColour?: Parameters<FfmpegMediaRunner['lightMap']>[0]['sourceColour']) => {
      const pngPath = join(dir, `${name}.png`);
      const made = await runner.lightMap({
        sourcePath: clip,
        outputPath: output,
        pngPath,
        transfer: 'pq',
        sourceColour,
        signal: new AbortController().signal,
        timeLimitMs: 120_000,
      });
      if (!made.ok) throw new Error(`no light map: ${made.stderrTail.join('\n')}`);
      return { png: await decodePng(pngPath), frameSeconds: made.frameSeconds };
    };
    const probed = await draw('probed-here');
    expect(probed.frameSeconds).toBe(job.items[0].output.light_map_frame_seconds);
    expect(probed.png.rgb.equals(stored.rgb)).toBe(true);
    const fullRange = await draw('full-range', {
      colorTransfer: 'bt709',
      colorPrimaries: 'bt709',
      colorSpace: 'bt709',
      colorRange: 'pc',
    });
    expect(fullRange.png.rgb.equals(stored.rgb)).toBe(false);
  }, 480_000);

  it('a source without colour tags gets its light map: read as BT.709, as the encode reads it', async () => {
    const job = await run(await untaggedMp4({ width: 160, height: 90, seconds: 1, audio: false }), {});
    const png = await fetchMap(job.items[0], 'untagged');
    expect(png).toMatchObject({ width: 320, height: 90 + LEGEND_HEIGHT });
  }, 240_000);

  it('retention removes the light map with the output; the sweeper removes one nothing points at', async () => {
    const job = await run(await lightPatternMp4(), {});
    expect((await storedObjects(job.job_id)).map((name) => name.split('.').pop())).toEqual(['mp4', 'png']);
    await db.query(`UPDATE assets SET expires_at = now() - interval '1 second' WHERE job_id = $1`, [job.job_id]);
    const gone = await fetch(job.items[0].output.light_map_url);
    expect(gone.status).toBe(404);
    await gone.arrayBuffer();
    // What the worker's retention task does.
    await worker.app.get(RetentionPurge).purge();
    expect(await storedObjects(job.job_id)).toEqual([]);

    // A light map a worker stored before it died (no asset row): swept once it is old enough; a live one stays.
    const live = await run(await lightPatternMp4(), {});
    const orphan = join(worker.config.storageDir, 'outputs', account.accountId, live.job_id, '0-deadRun1.png');
    await writeFile(orphan, 'left by a dead worker');
    const sweeper = worker.app.get(StorageSweeper);
    await sweeper.sweep(Date.now() + (api.config.storageSweepAfterSeconds + 60) * 1000);
    const left = await storedObjects(live.job_id);
    expect(left).not.toContain('0-deadRun1.png');
    expect(left.map((name) => name.split('.').pop())).toEqual(['mp4', 'png']);
    // Bodies are read to the end here: with the 404's body left unread the API's close waited on that
    // keep-alive connection for longer than Jest's 60 s hook timeout (3 of 3 runs at one point).
    const stillServed = await fetch(live.items[0].output.light_map_url);
    expect(stillServed.status).toBe(200);
    expect((await stillServed.arrayBuffer()).byteLength).toBeGreaterThan(0);
  }, 480_000);
});
