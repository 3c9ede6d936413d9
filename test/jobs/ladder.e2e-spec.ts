// The whole way with the real parts (issue 41): a real API and worker, `output.package: hls` asked at the
// submit (no test-side spec), the worker's package seen from outside only — the job view's playlist_url and
// renditions, the charge (the estimate's rung sum), every playlist and segment fetched through the one
// playback token and parsed with m3u8-parser, an HEVC rung decoded with ffmpeg, and the webhook's renditions.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Parser, type Manifest } from 'm3u8-parser';
import { DataSource } from 'typeorm';
import { STORAGE, type Storage } from '../../src/common/storage/storage';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { StorageSweeper } from '../../src/processing/storage-sweeper';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import {
  deleteRegisteredEndpoints,
  eventually,
  registerEndpoint,
  startReceiver,
  verify,
  type Receiver,
} from '../support/webhook-receiver';
import { startStack } from '../support/worker';

const run = promisify(execFile);
const REGION = 'ladder-e2e';
const SECONDS = 3;

function parse(text: string): Manifest {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

describe('an HLS ladder asked at the submit, made by the worker, played from outside', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let account: TestAccount;
  let receiver: Receiver;
  let storageDir: string;
  let work: string;
  let uploadId: string;

  beforeAll(async () => {
    storageDir = await mkdtemp(join(tmpdir(), 'mj-ladder-'));
    work = await mkdtemp(join(tmpdir(), 'mj-ladder-files-'));
    // This test fetches every file of a package from one address: above the public routes' per-IP limit.
    stack = await startStack({ REGION, STORAGE_DIR: storageDir, IP_RATE_LIMIT: '1000' });
    api = stack.api;
    receiver = await startReceiver();
    account = await createAccount(api, { credits: 1000 });
    uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 640, height: 360, seconds: SECONDS }));
  }, 180_000);

  afterAll(async () => {
    if (api) await deleteRegisteredEndpoints(api);
    await receiver?.stop();
    await stack?.close();
    await rm(storageDir, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  });

  /** Every file the master leads to, fetched through the playlist URL's token as a player does. */
  async function fetchPackage(playlistUrl: string) {
    const master = await fetch(playlistUrl);
    expect(master.status).toBe(200);
    expect(master.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
    const manifest = parse(await master.text());
    const audio = Object.values(manifest.mediaGroups?.AUDIO ?? {}).flatMap((group) =>
      Object.values(group).map((media) => media.uri!),
    );
    const media = new Map<string, { manifest: Manifest; files: Map<string, Buffer> }>();
    for (const uri of [...manifest.playlists!.map((playlist) => playlist.uri), ...audio]) {
      const playlistUrlOf = new URL(uri, playlistUrl);
      // The token is a path segment: a resolved relative URI keeps it.
      expect(playlistUrlOf.pathname.startsWith(new URL('.', playlistUrl).pathname)).toBe(true);
      const response = await fetch(playlistUrlOf);
      expect(response.status).toBe(200);
      const parsed = parse(await response.text());
      expect(parsed.endList).toBe(true);
      expect(parsed.segments.length).toBeGreaterThan(0);
      const files = new Map<string, Buffer>();
      for (const file of [parsed.segments[0].map!.uri, ...parsed.segments.map((segment) => segment.uri)]) {
        const got = await fetch(new URL(file, playlistUrlOf));
        expect(got.status).toBe(200);
        const bytes = Buffer.from(await got.arrayBuffer());
        expect(bytes.length).toBeGreaterThan(0);
        files.set(file, bytes);
      }
      media.set(uri, { manifest: parsed, files });
    }
    return { manifest, media };
  }

  async function submitAndWait(output: Record<string, unknown>) {
    const inputs = [{ upload_id: uploadId }];
    const estimate = await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', {
      key: account.apiKey,
      body: { inputs, output },
    });
    expect(estimate.status).toBe(200);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: { inputs, output } });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;
    const view = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 400_000);
    return { jobId, view, estimate: estimate.body };
  }

  it('package hls: the view, the charge, every file through the token, an HEVC rung decoded, the webhook', async () => {
    const endpoint = await registerEndpoint(api, account.apiKey, receiver.url('/ladder'));
    const { jobId, view, estimate } = await submitAndWait({ package: 'hls' });
    expect(view.status).toBe('succeeded');
    const [item] = view.items;
    expect(item.status).toBe('succeeded');

    // Priced per rung: the estimate's rung sum for the seconds processed (the whole source).
    const [estimated] = estimate.items as { estimated_credits: number; rungs: { estimated_credits: number }[] }[];
    expect(estimated.rungs.length).toBeGreaterThan(1);
    expect(estimated.estimated_credits).toBe(estimated.rungs.reduce((sum, rung) => sum + rung.estimated_credits, 0));
    expect(item.charged_credits).toBe(estimated.estimated_credits);

    const output = item.output;
    expect(output.container).toBe('hls');
    expect(output.playlist_url).toMatch(new RegExp(`^${api.url}/v1/playback/[^/]+/master\\.m3u8$`));
    const ranges = output.renditions.map((r: any) => `${r.codec} ${r.height} ${r.video_range}`);
    expect(ranges).toEqual(expect.arrayContaining(['hevc 360 PQ', 'h264 360 SDR']));
    expect(output.renditions).toHaveLength(estimated.rungs.length);
    for (const rendition of output.renditions) {
      expect(Object.keys(rendition).sort()).toEqual(
        [
          'average_bandwidth',
          'bandwidth',
          'codec',
          'duration_seconds',
          'frame_rate',
          'height',
          'light',
          'segments',
          'transfer',
          'video_range',
          'width',
        ].sort(),
      );
      expect(rendition.duration_seconds).toBeCloseTo(SECONDS, 0);
      expect(rendition.bandwidth).toBeGreaterThanOrEqual(rendition.average_bandwidth);
      expect(rendition.average_bandwidth).toBeGreaterThan(0);
      if (rendition.video_range === 'SDR') expect(rendition).toMatchObject({ transfer: 'bt709', light: null });
      else expect(rendition).toMatchObject({ transfer: 'smpte2084', light: expect.any(Object) });
    }

    // The master and everything it leads to, through the token.
    const { manifest, media } = await fetchPackage(output.playlist_url);
    expect(manifest.independentSegments).toBe(true);
    expect(manifest.playlists).toHaveLength(output.renditions.length);
    for (const playlist of manifest.playlists!) {
      const attributes = playlist.attributes;
      expect(attributes['VIDEO-RANGE']).toMatch(/^(PQ|HLG|SDR)$/);
      expect(attributes.CODECS).toMatch(/^(hvc1|avc1|av01)\..+,mp4a\.40\.2$/);
      expect(attributes.RESOLUTION).toEqual({ width: expect.any(Number), height: expect.any(Number) });
      expect(attributes.BANDWIDTH).toBeGreaterThan(0);
      const rendition = output.renditions.find(
        (r: any) => r.height === attributes.RESOLUTION.height && r.video_range === attributes['VIDEO-RANGE'],
      );
      expect(rendition).toBeDefined();
      expect(attributes.BANDWIDTH).toBe(rendition.bandwidth);
      expect(media.get(playlist.uri)!.manifest.segments).toHaveLength(rendition.segments);
    }

    // An HEVC rung's init + segments, joined as a player would, decode with ffmpeg.
    const hevc = manifest.playlists!.find((playlist) => playlist.attributes.CODECS.startsWith('hvc1'))!;
    const rung = media.get(hevc.uri)!;
    const joined = join(work, 'hevc.mp4');
    await writeFile(
      joined,
      Buffer.concat([
        rung.files.get(rung.manifest.segments[0].map!.uri)!,
        ...rung.manifest.segments.map((segment) => rung.files.get(segment.uri)!),
      ]),
    );
    const decoded = await run('ffmpeg', ['-v', 'error', '-xerror', '-i', joined, '-map', '0:v', '-f', 'null', '-']);
    expect(decoded.stderr).toBe('');
    const probed = await run('ffprobe', [
      ...['-v', 'error', '-select_streams', 'v:0', '-count_frames'],
      ...['-show_entries', 'stream=codec_name,color_transfer,nb_read_frames', '-of', 'json', joined],
    ]);
    const [stream] = JSON.parse(probed.stdout).streams;
    expect(stream).toMatchObject({ codec_name: 'hevc', color_transfer: 'smpte2084' });
    expect(Number(stream.nb_read_frames)).toBe(SECONDS * 30);

    // The webhook's item carries the same renditions.
    const delivery = await eventually(() =>
      receiver.received.find(
        (request) => request.path === '/ladder' && verify(endpoint.secret, request).data.job?.job_id === jobId,
      ),
    );
    const event = verify(endpoint.secret, delivery);
    expect((event.data.items?.[0].output as any)?.renditions).toEqual(output.renditions);
  }, 600_000);

  it('codecs hevc and av1: AV1 10-bit rungs beside the HEVC ones, every file through the token', async () => {
    const { view, estimate } = await submitAndWait({ package: 'hls', codecs: ['hevc', 'av1'] });
    expect([view.status, view.items[0].error]).toEqual(['succeeded', null]);
    const [item] = view.items;
    expect(item.charged_credits).toBe(estimate.items[0].estimated_credits);
    const codecs = item.output.renditions.map((r: any) => `${r.codec} ${r.video_range}`);
    expect(codecs).toEqual(expect.arrayContaining(['hevc PQ', 'av1 PQ', 'h264 SDR']));
    const { manifest, media } = await fetchPackage(item.output.playlist_url);
    expect(manifest.playlists!.map((playlist) => playlist.attributes.CODECS.split('.')[0]).sort()).toEqual(
      expect.arrayContaining(['av01', 'hvc1', 'avc1']),
    );
    const av1 = manifest.playlists!.find((playlist) => playlist.attributes.CODECS.startsWith('av01'))!;
    // 10-bit AV1 Main, 4:2:0, BT.2020 PQ limited range: the colour fields named (without them the binding means BT.709).
    expect(av1.attributes.CODECS).toMatch(/^av01\.0\.\d\d[MH]\.10\.0\.11[0-3]\.09\.16\.09\.0,mp4a\.40\.2$/);
    expect(av1.attributes['VIDEO-RANGE']).toBe('PQ');
    // HDR10 metadata in the AV1 rung's init segment (mdcv, clli in its av01 sample entry), as in the HEVC rungs'.
    const rung = media.get(av1.uri)!;
    const init = join(work, 'av1-init.mp4');
    await writeFile(init, rung.files.get(rung.manifest.segments[0].map!.uri)!);
    const metadata = await readHdrMetadata(init);
    expect(metadata).toMatchObject({ peakNits: 1000 });
    const rendition = item.output.renditions.find((r: any) => r.codec === 'av1');
    expect(metadata!.levels).toEqual({ maxCll: rendition.light.max_cll, maxFall: rendition.light.max_fall });
  }, 600_000);

  it("a deleted job's package leaves storage: the retention purge deletes the job, the sweeper every object under its prefix", async () => {
    const { jobId, view } = await submitAndWait({ package: 'hls' });
    expect(view.status).toBe('succeeded');
    const db = api.app.get(DataSource);
    const storage = stack.worker.app.get<Storage>(STORAGE);
    const [asset] = await db.query(`SELECT storage_key FROM assets WHERE job_id = $1 AND container = 'hls'`, [jobId]);
    const objects = async (): Promise<string[]> => {
      const keys: string[] = [];
      for await (const entry of storage.list(asset.storage_key)) keys.push(entry.key);
      return keys;
    };
    expect((await objects()).length).toBeGreaterThan(5);

    // Past the job's retention (its output not yet expired): the purge deletes the job and, with it, the asset row.
    const days = stack.worker.config.jobRetentionDays + 1;
    await db.query(`UPDATE jobs SET finished_at = now() - make_interval(days => $2) WHERE id = $1`, [jobId, days]);
    await stack.worker.app.get(RetentionPurge).purge();
    expect((await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey })).status).toBe(404);
    // Nothing points at the package any more: the sweeper removes every object under the prefix.
    const later = Date.now() + (stack.worker.config.storageSweepAfterSeconds + 60) * 1000;
    await stack.worker.app.get(StorageSweeper).sweep(later);
    expect(await objects()).toEqual([]);
  }, 600_000);
});
