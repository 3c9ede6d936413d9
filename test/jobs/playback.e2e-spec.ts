// Playing an HLS package through its signed token (playlist_url), on both storage backends (a
// folder, and S3 on a real Swift): every playlist and segment the master leads to is served with its type
// and caching, byte ranges work, and tokens and paths that must not reach the package are refused with the
// error envelope. The package is a real one (test/support/hls-package.ts) ended through the real lifecycle.
import { request as httpRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Parser } from 'm3u8-parser';
import { DataSource } from 'typeorm';
import { STORAGE, type Storage } from '../../src/common/storage/storage';
import { JobLifecycle } from '../../src/jobs/job-lifecycle';
import { signPlaybackToken } from '../../src/jobs/playback-token';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type JsonResponse, type TestAccount, type TestApi } from '../support/app';
import { markRegionHealthy } from '../support/chaos-accounts';
import { expectError } from '../support/error-checks';
import { finishWithPackage, localPackage } from '../support/hls-package';
import { upload } from '../support/jobs';
import { startSwift, type SwiftServer } from '../support/swift';
import { Readable } from 'node:stream';

const REGION = 'playback';
const HOUR = 3600_000;

function parse(text: string) {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

/** GET with the path sent byte for byte (fetch would resolve `..` and `%2e%2e` before sending). */
function rawGet(base: string, path: string): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}/`, { path, method: 'GET' }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => (text += part));
      response.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') headers.set(name, value);
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: response.statusCode ?? 0, headers, body });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

let swift: SwiftServer | undefined;

afterAll(async () => {
  await swift?.stop();
});

describe.each([
  ['local', async (): Promise<Record<string, string>> => ({})],
  [
    's3',
    async (): Promise<Record<string, string>> => {
      swift = await startSwift();
      return swift.env(`mj-playback-${process.pid}`, 'mj-e2e/');
    },
  ],
])('a package played through its token (%s storage)', (backend, storageEnv) => {
  let api: TestApi;
  let account: TestAccount;
  let uploadId: string;

  beforeAll(async () => {
    // A player and this test fetch many files a second from one address: above the public routes' per-IP limit.
    api = await startApi({ REGION, IP_RATE_LIMIT: '1000', ...(await storageEnv()) });
    expect(api.config.storage.backend).toBe(backend);
    // No worker runs here: the package is ended by the test (hls-package.ts), so the region only needs to look healthy.
    await markRegionHealthy(api, REGION);
    account = await createAccount(api, { credits: 1000 });
    uploadId = await upload(api, account.apiKey, await sdrMp4({ seconds: 3 }));
  }, 180_000);

  afterAll(async () => {
    await api?.close();
  });

  async function submitted(key = account.apiKey): Promise<string> {
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key, body: { inputs: [{ upload_id: uploadId }] } });
    expect(response.status).toBe(202);
    return response.body.job_id as string;
  }

  const tokenFor = (assetId: string, expiresAt = new Date(Date.now() + HOUR)) =>
    signPlaybackToken(assetId, api.config.assetUrlSecret, expiresAt);

  it('serves the master, every playlist and every segment it leads to, byte for byte, with type and caching', async () => {
    const assetId = await finishWithPackage(api, await submitted());
    const pkg = await localPackage();
    const base = `${api.url}/v1/playback/${tokenFor(assetId)}`;

    const master = await fetch(`${base}/master.m3u8`);
    expect(master.status).toBe(200);
    expect(master.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
    expect(master.headers.get('cache-control')).toBe('public, max-age=5');
    const masterText = await master.text();
    expect(masterText).toBe(await readFile(join(pkg.dir, 'master.m3u8'), 'utf8'));

    // Follow the master's relative URIs as a player does: every file of the package is reached.
    const manifest = parse(masterText);
    const playlists = [
      ...manifest.playlists!.map((playlist) => playlist.uri),
      ...Object.values(manifest.mediaGroups!.AUDIO!).flatMap((group) => Object.values(group).map((m) => m.uri!)),
    ];
    const reached = new Set(['master.m3u8']);
    for (const playlistPath of playlists) {
      const folder = playlistPath.split('/')[0];
      const response = await fetch(new URL(playlistPath, `${base}/master.m3u8`));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
      reached.add(playlistPath);
      const media = parse(await response.text());
      const files = [media.segments[0].map!.uri, ...media.segments.map((segment) => segment.uri)];
      for (const file of files) {
        const url = new URL(file, new URL(playlistPath, `${base}/master.m3u8`));
        const got = await fetch(url);
        expect(got.status).toBe(200);
        const seconds = Number(/max-age=(\d+)/.exec(got.headers.get('cache-control')!)![1]);
        expect(got.headers.get('cache-control')).toMatch(/^public, max-age=\d+, immutable$/);
        expect(seconds).toBeGreaterThan(3500);
        expect(seconds).toBeLessThanOrEqual(3600);
        expect(got.headers.get('content-type')).toBe(file.endsWith('.mp4') ? 'video/mp4' : 'video/iso.segment');
        const bytes = Buffer.from(await got.arrayBuffer());
        expect(bytes.equals(await readFile(join(pkg.dir, folder, file)))).toBe(true);
        expect(got.headers.get('content-length')).toBe(String(bytes.length));
        reached.add(`${folder}/${file}`);
      }
    }
    expect([...reached].sort()).toEqual([...pkg.files].sort());
  });

  it('the job view gives the package as playlist_url (also its url) with its renditions, and the link plays', async () => {
    const jobId = await submitted();
    const assetId = await finishWithPackage(api, jobId);
    const view = await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey });
    expect(view.status).toBe(200);
    expect(view.body.status).toBe('succeeded');
    const output = view.body.items[0].output;
    expect(output).toMatchObject({ asset_id: assetId, container: 'hls' });
    expect(output.playlist_url).toMatch(
      new RegExp(`^${api.url}/v1/playback/${assetId}\\.\\d+\\.[\\w-]+/master\\.m3u8$`),
    );
    expect(output.url).toBe(output.playlist_url);
    expect(output.expires_at).toBe(output.playlist_expires_at);
    const expiresIn = Date.parse(output.playlist_expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(3500_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);
    expect(output.renditions).toEqual((await localPackage()).renditions);
    expect(output.renditions.map((r: { codec: string; video_range: string }) => `${r.codec} ${r.video_range}`)).toEqual(
      ['h264 SDR', 'av1 PQ', 'hevc PQ'],
    );
    const master = await fetch(output.playlist_url);
    expect(master.status).toBe(200);
    expect(parse(await master.text()).playlists).toHaveLength(3);
  });

  it('answers a byte range of a segment with 206, and an unsatisfiable one with 416', async () => {
    const assetId = await finishWithPackage(api, await submitted());
    const pkg = await localPackage();
    const whole = await readFile(join(pkg.dir, 'h264-180-sdr', 'seg-00001.m4s'));
    const url = `${api.url}/v1/playback/${tokenFor(assetId)}/h264-180-sdr/seg-00001.m4s`;
    const part = await fetch(url, { headers: { range: 'bytes=10-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-99/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(10, 100))).toBe(true);
    const beyond = await call(api, 'GET', url.slice(api.url.length), { headers: { range: `bytes=${whole.length}-` } });
    expectError(api, beyond, 'range_not_satisfiable', 'Range');
  });

  it('refuses an expired token, a forged one, one moved to another asset, and one of a non-package', async () => {
    const assetId = await finishWithPackage(api, await submitted());
    const other = await createAccount(api, { credits: 1000 });
    const otherUpload = await upload(api, other.apiKey, await sdrMp4({ seconds: 3 }));
    const otherJob = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: other.apiKey,
      body: { inputs: [{ upload_id: otherUpload }] },
    });
    const otherAsset = await finishWithPackage(api, otherJob.body.job_id as string);
    const get = (token: string, path = 'master.m3u8') => call(api, 'GET', `/v1/playback/${token}/${path}`);

    expect((await get(tokenFor(assetId))).status).toBe(200);
    expectError(api, await get(tokenFor(assetId, new Date(Date.now() - 1000))), 'asset_not_found', 'token');
    const [id, expires, signature] = tokenFor(assetId).split('.');
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expectError(api, await get(`${id}.${expires}.${flipped}`), 'asset_not_found', 'token');
    expectError(api, await get(`${id}.${Number(expires) + 60}.${signature}`), 'asset_not_found', 'token');
    // Another account's package's token with this asset's id (or the reverse) opens neither.
    const [, otherExpires, otherSignature] = tokenFor(otherAsset).split('.');
    expectError(api, await get(`${id}.${otherExpires}.${otherSignature}`), 'asset_not_found', 'token');
    expectError(api, await get(`${otherAsset}.${expires}.${signature}`), 'asset_not_found', 'token');
    expectError(api, await get('not-a-token'), 'asset_not_found', 'token');
    // A file output (an MP4) is no package, whatever token names it.
    const fileJob = await submitted();
    const lifecycle = api.app.get(JobLifecycle);
    const taken = (await lifecycle.takeItem(fileJob, 0, 'wkr_testfile'))!;
    const key = `outputs/${account.accountId}/${fileJob}/0.mp4`;
    await api.app.get<Storage>(STORAGE).write(key, Readable.from([Buffer.from('an mp4')]), 100);
    await lifecycle.endItems(taken.job, [
      {
        index: 0,
        status: 'succeeded',
        chargedCredits: Number(taken.item.estimated_credits),
        processedSeconds: 3,
        error: null,
        asset: { storageKey: key, sizeBytes: 6, container: 'mp4', contentType: 'video/mp4', media: {} },
      },
    ]);
    const [fileAsset] = await api.app
      .get(DataSource)
      .query(`SELECT id FROM assets WHERE job_id = $1 AND container = 'mp4'`, [fileJob]);
    expectError(api, await get(tokenFor(fileAsset.id as string)), 'asset_not_found', 'token');
  });

  it('refuses a deleted or expired package', async () => {
    const db = () => api.app.get(DataSource);
    const deleted = await finishWithPackage(api, await submitted());
    const expired = await finishWithPackage(api, await submitted());
    await db().query(`UPDATE assets SET deleted_at = now() WHERE id = $1`, [deleted]);
    await db().query(`UPDATE assets SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired]);
    for (const assetId of [deleted, expired]) {
      const response = await call(api, 'GET', `/v1/playback/${tokenFor(assetId)}/h264-180-sdr/init.mp4`);
      expectError(api, response, 'asset_not_found', 'token');
    }
  });

  it("stops at the package's retention: no segment is cacheable past it, and its playlist_url is refused at once after", async () => {
    const jobId = await submitted();
    const assetId = await finishWithPackage(api, jobId);
    const view = await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { key: account.apiKey });
    const playlistUrl = view.body.items[0].output.playlist_url as string;
    // Retention ends in 30 s, well inside the token's hour.
    await api.app
      .get(DataSource)
      .query(`UPDATE assets SET expires_at = now() + interval '30 seconds' WHERE id = $1`, [assetId]);
    const segment = await fetch(new URL('h264-180-sdr/init.mp4', playlistUrl));
    expect(segment.status).toBe(200);
    const maxAge = Number(/max-age=(\d+)/.exec(segment.headers.get('cache-control')!)![1]);
    expect(maxAge).toBeLessThanOrEqual(30);
    expect((await fetch(playlistUrl)).headers.get('cache-control')).toBe('public, max-age=5');
    // Retention passes (the hourly purge has not run: the row is not marked deleted): refused at once.
    await api.app
      .get(DataSource)
      .query(`UPDATE assets SET expires_at = now() - interval '1 millisecond' WHERE id = $1`, [assetId]);
    for (const url of [playlistUrl, new URL('h264-180-sdr/seg-00000.m4s', playlistUrl).href]) {
      expectError(api, await call(api, 'GET', url.slice(api.url.length)), 'asset_not_found', 'token');
    }
  });

  it('refuses every path that is not a file of the package', async () => {
    const token = tokenFor(await finishWithPackage(api, await submitted()));
    const refusedAsPath = [
      '..%2F..%2Fuploads',
      '%2e%2e/master.m3u8',
      'h264-180-sdr/%2e%2e',
      'h264-180-sdr%2F..%2F..%2Fx.m4s',
      '..%5Cmaster.m3u8',
      'h264-180-sdr%5Cinit.mp4',
      '.m3u8%00',
      'h264-180-sdr/init.mp4%3F',
      'h264-180-sdr/seg%2000.m4s',
      'h264-180-sdr/init.txt',
      '%2Fetc%2Fpasswd.m3u8',
    ];
    for (const path of refusedAsPath) {
      const response = await rawGet(api.url, `/v1/playback/${token}/${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
      expectError(api, response, 'invalid_parameter');
    }
    // Dot segments the router passes on as a name (refused as above), and shapes it has no route for.
    const refusedAsRoute: [string, number, string][] = [];
    for (const path of ['../master.m3u8', 'h264-180-sdr/../../x.m4s', '//etc/passwd', 'a/b/c.m4s', 'h264-180-sdr/']) {
      const response = await rawGet(api.url, `/v1/playback/${token}/${path}`);
      refusedAsRoute.push([path, response.status, response.body.error.code]);
    }
    expect(refusedAsRoute).toEqual([
      ['../master.m3u8', 400, 'invalid_parameter'],
      ['h264-180-sdr/../../x.m4s', 404, 'route_not_found'],
      ['//etc/passwd', 404, 'route_not_found'],
      ['a/b/c.m4s', 404, 'route_not_found'],
      ['h264-180-sdr/', 404, 'route_not_found'],
    ]);
    // The token and the path are judged before the package is looked up: a valid token of no package with a
    // bad path, and a good token with a name no package file has, are refused as paths, not as packages.
    const noPackage = tokenFor('ast_doesnotexist0000');
    for (const path of ['..%2Fmaster.m3u8', 'h264-180-sdr/init.txt', 'index.m3u8', 'h264-180-sdr/secret.m4s']) {
      expectError(api, await rawGet(api.url, `/v1/playback/${noPackage}/${path}`), 'invalid_parameter', 'path');
      expectError(api, await rawGet(api.url, `/v1/playback/${token}/${path}`), 'invalid_parameter', 'path');
    }
    // A bad token wins over a bad path (the token is the credential).
    expectError(api, await rawGet(api.url, `/v1/playback/not-a-token/..%2Fmaster.m3u8`), 'asset_not_found', 'token');
    // A well-formed name the package does not have.
    expectError(
      api,
      await rawGet(api.url, `/v1/playback/${token}/h264-180-sdr/seg-99999.m4s`),
      'asset_not_found',
      'path',
    );
    expectError(
      api,
      await rawGet(api.url, `/v1/playback/${token}/hevc-2160-pq/playlist.m3u8`),
      'asset_not_found',
      'path',
    );
  });
});
