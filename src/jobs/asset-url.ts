// Signed, expiring links to output assets: anyone holding the link may download until it expires,
// without an API key (so a browser or ffmpeg can fetch it), and nothing else can be forged from it.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const ASSET_LINK_TTL_SECONDS = 3600;

function signature(assetId: string, expires: number, secret: string): string {
  return createHmac('sha256', secret).update(`${assetId}.${expires}`).digest('base64url');
}

export function signAssetUrl(baseUrl: string, assetId: string, secret: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${baseUrl}/v1/assets/${assetId}/content?expires=${expires}&signature=${signature(assetId, expires, secret)}`;
}

export function verifyAssetSignature(
  assetId: string,
  expires: string,
  given: string,
  secret: string,
  now = Date.now(),
): boolean {
  if (!/^\d{1,12}$/.test(expires) || Number(expires) * 1000 <= now) return false;
  const expected = Buffer.from(signature(assetId, Number(expires), secret));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
