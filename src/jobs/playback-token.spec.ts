import { signAssetUrl } from './asset-url';
import { packageCacheControl, packageFileKey, packageFileKind } from './package-files';
import { signPlaybackToken, signPlaylistUrl, verifyPlaybackToken } from './playback-token';

const SECRET = 'a-test-secret-of-enough-length';
const ASSET = 'ast_0AbCdEfGh1234567890abcd';
const NOW = Date.UTC(2026, 11, 7, 12);
const IN_AN_HOUR = new Date(NOW + 3600_000);

describe('the playback token', () => {
  it('names the asset and its expiry, and verifies until then', () => {
    const token = signPlaybackToken(ASSET, SECRET, IN_AN_HOUR);
    expect(token).toMatch(/^ast_0AbCdEfGh1234567890abcd\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyPlaybackToken(token, SECRET, NOW)).toEqual({ assetId: ASSET, expires: (NOW + 3600_000) / 1000 });
    expect(verifyPlaybackToken(token, SECRET, NOW + 3600_000)).toBeNull();
  });

  it('is refused when forged, re-aimed at another asset, extended, or signed with another secret', () => {
    const [id, expires, signature] = signPlaybackToken(ASSET, SECRET, IN_AN_HOUR).split('.');
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    expect(verifyPlaybackToken(`${id}.${expires}.${flipped}`, SECRET, NOW)).toBeNull();
    expect(verifyPlaybackToken(`ast_other.${expires}.${signature}`, SECRET, NOW)).toBeNull();
    expect(verifyPlaybackToken(`${id}.${Number(expires) + 1}.${signature}`, SECRET, NOW)).toBeNull();
    expect(verifyPlaybackToken(signPlaybackToken(ASSET, `${SECRET}!`, IN_AN_HOUR), SECRET, NOW)).toBeNull();
    expect(verifyPlaybackToken('', SECRET, NOW)).toBeNull();
  });

  it('is never an asset-link signature, nor the reverse', () => {
    const link = new URL(signAssetUrl('http://x', ASSET, SECRET, IN_AN_HOUR));
    const asToken = `${ASSET}.${link.searchParams.get('expires')}.${link.searchParams.get('signature')}`;
    expect(verifyPlaybackToken(asToken, SECRET, NOW)).toBeNull();
  });

  it('sits in the path of the master playlist, so relative URIs keep it', () => {
    const url = signPlaylistUrl('https://api.example', ASSET, SECRET, IN_AN_HOUR);
    expect(url).toBe(`https://api.example/v1/playback/${signPlaybackToken(ASSET, SECRET, IN_AN_HOUR)}/master.m3u8`);
    expect(new URL('h264-720-sdr/playlist.m3u8', url).pathname).toMatch(/^\/v1\/playback\/ast_[^/]+\/h264-720-sdr\//);
  });
});

describe('files of a package', () => {
  const prefix = 'outputs/acct/job/0.hls/';

  it('are a name or a folder and a name, under the prefix', () => {
    expect(packageFileKey(prefix, 'master.m3u8')).toBe(`${prefix}master.m3u8`);
    expect(packageFileKey(prefix, 'hevc-1080-pq/seg-00012.m4s')).toBe(`${prefix}hevc-1080-pq/seg-00012.m4s`);
  });

  it.each(['..', '.', '../x.m4s', 'a/..', 'a/../b', '/etc/passwd', 'a\\b.m4s', 'a/b/c.m4s', '', 'a//b', 'a/', 'é.m4s'])(
    'refuse %j',
    (path) => expect(packageFileKey(prefix, path)).toBeNull(),
  );

  it('are served by kind, segments cached until the token expires and playlists a few seconds', () => {
    expect(['master.m3u8', 'a/init.mp4', 'a/seg-1.m4s', 'a/x.ts'].map(packageFileKind)).toEqual([
      'playlist',
      'init',
      'segment',
      null,
    ]);
    expect(packageCacheControl('segment', 3599.7)).toBe('public, max-age=3599, immutable');
    expect(packageCacheControl('init', 100)).toBe('public, max-age=100, immutable');
    expect(packageCacheControl('playlist', 3599)).toBe('public, max-age=5');
    expect(packageCacheControl('playlist', 2.5)).toBe('public, max-age=2');
  });
});
