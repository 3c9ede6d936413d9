// Who may read /metrics (API and workers). With METRICS_TOKEN set: only `Authorization: Bearer <token>`.
// Without it: anyone outside production (development, tests); in production only loopback clients,
// so per-route counts (e.g. admin calls) never reach the internet by default.
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

export type MetricsAccess = 'allowed' | 'missing_token' | 'wrong_token' | 'not_loopback';

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const bare = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

function sameSecret(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

export function metricsAccess(
  settings: { metricsToken: string | null; nodeEnv: string },
  request: { remoteAddress: string | undefined; authorization: string | undefined },
): MetricsAccess {
  if (settings.metricsToken) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? '');
    if (!match) return 'missing_token';
    return sameSecret(match[1], settings.metricsToken) ? 'allowed' : 'wrong_token';
  }
  if (settings.nodeEnv === 'production' && !isLoopback(request.remoteAddress)) return 'not_loopback';
  return 'allowed';
}
