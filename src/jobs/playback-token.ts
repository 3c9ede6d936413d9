// The signed playback token of an HLS package (`playlist_url`, docs/api-guide.md "Streaming packages"). A
// package is many objects, so a link per object would not do: one token covers every playlist and segment under the package's prefix.
// It is a path segment (`/v1/playback/<token>/master.m3u8`) so that the playlists' relative URIs keep it,
// and, like an asset link, it is the only credential: anyone holding it may play until it expires.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** `<assetId>.<expires>.<signature>`: asset ids are `ast_` + base62, base64url has no dot. */
const TOKEN_PATTERN = /^(ast_[0-9A-Za-z]{1,64})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

function signature(assetId: string, expires: number, secret: string): string {
  // `playback.` keeps a playback token from ever being a valid asset-link signature, and the reverse.
  return createHmac('sha256', secret).update(`playback.${assetId}.${expires}`).digest('base64url');
}

export function signPlaybackToken(assetId: string, secret: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${assetId}.${expires}.${signature(assetId, expires, secret)}`;
}

/** The package's master playlist under a fresh token: the job view's `playlist_url`. */
export function signPlaylistUrl(baseUrl: string, assetId: string, secret: string, expiresAt: Date): string {
  return `${baseUrl}/v1/playback/${signPlaybackToken(assetId, secret, expiresAt)}/master.m3u8`;
}

/**
 * The asset a token grants and until when (epoch seconds); null when the token is malformed, forged or
 * expired — the caller answers all three alike, so a token tells nothing about why it fails.
 */
export function verifyPlaybackToken(
  token: string,
  secret: string,
  now = Date.now(),
): { assetId: string; expires: number } | null {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return null;
  const [, assetId, expiresText, given] = match;
  const expires = Number(expiresText);
  if (expires * 1000 <= now) return null;
  const expected = Buffer.from(signature(assetId, expires, secret));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual) ? { assetId, expires } : null;
}
