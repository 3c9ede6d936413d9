// Who may read /metrics (API and workers). With METRICS_TOKEN set: only `Authorization: Bearer <token>`.
// Without it: anyone outside production (development, tests); in production only loopback clients,
// so per-route counts (e.g. admin calls) never reach the internet by default. The client is the one
// TRUST_PROXY resolves; a request forwarded on behalf of someone no trusted proxy vouched for (a proxy
// the API was not told about) is not a loopback client's, even when it arrives from loopback.
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
  request: {
    /** The client's address: the peer, or the client behind the trusted proxies (TRUST_PROXY). */
    remoteAddress: string | undefined;
    authorization: string | undefined;
    /** X-Forwarded-For names a client beyond `remoteAddress` that no trusted proxy vouched for. */
    forwardedFurther?: boolean;
  },
): MetricsAccess {
  if (settings.metricsToken) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? '');
    if (!match) return 'missing_token';
    return sameSecret(match[1], settings.metricsToken) ? 'allowed' : 'wrong_token';
  }
  if (settings.nodeEnv === 'production' && (request.forwardedFurther || !isLoopback(request.remoteAddress)))
    return 'not_loopback';
  return 'allowed';
}

/**
 * Whether X-Forwarded-For claims more hops than the trusted proxies resolved (Fastify's `ips` is the
 * peer and every address up to and including the client it believes; without TRUST_PROXY, just the peer).
 */
export function forwardedFurther(headers: Record<string, string | string[] | undefined>, resolved: number): boolean {
  const header = headers['x-forwarded-for'];
  if (header === undefined) return false;
  const claimed = (Array.isArray(header) ? header.join(',') : header).split(',').filter((part) => part.trim()).length;
  return 1 + claimed > resolved;
}
