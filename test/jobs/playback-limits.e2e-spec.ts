// Playback has its own per-address limit (PLAYBACK_RATE_LIMIT), apart from the routes without a key
// (IP_RATE_LIMIT): a player fetching a package's playlists and segments in a burst — a seek, or a few
// viewers behind one NAT — is not refused mid-stream at the public routes' 20 a second, and a client far
// beyond any player still gets 429 rate_limit_exceeded with numbers it can act on.
import { Parser } from 'm3u8-parser';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type JsonResponse, type TestApi } from '../support/app';
import { markRegionHealthy } from '../support/chaos-accounts';
import { expectError } from '../support/error-checks';
import { finishWithPackage } from '../support/hls-package';
import { upload } from '../support/jobs';

const REGION = 'playback-limits';

/** Every file of the package the master leads to, as URLs (master, playlists, init and media segments). */
async function packageUrls(playlistUrl: string): Promise<string[]> {
  const parse = (text: string) => {
    const parser = new Parser();
    parser.push(text);
    parser.end();
    return parser.manifest;
  };
  const master = parse(await (await fetch(playlistUrl)).text());
  const audio = Object.values(master.mediaGroups?.AUDIO ?? {}).flatMap((group) =>
    Object.values(group).map((media) => media.uri!),
  );
  const urls = [playlistUrl];
  for (const uri of [...master.playlists!.map((playlist) => playlist.uri), ...audio]) {
    const playlist = new URL(uri, playlistUrl);
    urls.push(playlist.href);
    const media = parse(await (await fetch(playlist)).text());
    for (const file of [media.segments[0].map!.uri, ...media.segments.map((segment) => segment.uri)])
      urls.push(new URL(file, playlist).href);
  }
  return urls;
}

describe('playback and the rate limits', () => {
  let api: TestApi;

  afterEach(async () => {
    await api?.close();
  });

  /** An API (its other settings the defaults, IP_RATE_LIMIT 20) with one finished package; its playlist_url. */
  async function apiWithPackage(env: Record<string, string>): Promise<string> {
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-playback-limits-')), ...env });
    await markRegionHealthy(api, REGION);
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ seconds: 3 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    await finishWithPackage(api, submitted.body.job_id as string);
    const view = await call(api, 'GET', `/v1/sdr2hdr/jobs/${submitted.body.job_id as string}`, { key: account.apiKey });
    return view.body.items[0].output.playlist_url as string;
  }

  it('a burst of every playlist and segment, twice over (a player seeking), is all served under the default limits', async () => {
    const playlistUrl = await apiWithPackage({});
    expect(api.config.ipRateLimitPerSecond).toBe(20);
    const urls = await packageUrls(playlistUrl);
    expect(urls.length).toBeGreaterThan(20);
    // All at once, as several hls.js players behind one address filling their buffers after a seek.
    const statuses = await Promise.all([...urls, ...urls].map(async (url) => (await fetch(url)).status));
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it('a client far beyond any player gets 429 rate_limit_exceeded with Retry-After and the limit it broke', async () => {
    const playlistUrl = await apiWithPackage({ PLAYBACK_RATE_LIMIT: '3' });
    // Bursts of ten: each spans at most two one-second windows, so one of them counts more than three.
    let refused: Response | undefined;
    for (let burst = 0; burst < 50 && !refused; burst++) {
      const responses = await Promise.all(Array.from({ length: 10 }, () => fetch(playlistUrl)));
      refused = responses.find((response) => response.status !== 200);
    }
    expect(refused).toBeDefined();
    const response: JsonResponse = { status: refused!.status, headers: refused!.headers, body: await refused!.json() };
    expectError(api, response, 'rate_limit_exceeded');
    expect(response.body.error.details).toEqual({ limit: 3, window_seconds: 1, retry_after_seconds: 1 });
    expect(response.headers.get('retry-after')).toBe('1');
  });
});
