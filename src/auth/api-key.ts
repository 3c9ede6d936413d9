import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../common/ids';

export const API_KEY_PATTERN = /^mjk_[0-9A-Za-z]{32,64}$/;

/** A new key: `mjk_` + 40 base62 characters (≈238 bits). Only its hash and prefix are ever stored. */
export function generateApiKey(): { key: string; hash: Buffer; prefix: string } {
  const key = `mjk_${randomBase62(40)}`;
  return { key, hash: hashApiKey(key), prefix: key.slice(0, 12) };
}

/** SHA-256 of a key, on every authenticated request: the one-shot `hash` costs ~1 µs here, createHash ~4 µs. */
export function hashApiKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/** A key rotated with a grace period has a revoked_at in the future: it keeps working until then. */
export function isRevoked(revokedAt: Date | null, now = Date.now()): boolean {
  return revokedAt !== null && revokedAt.getTime() <= now;
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
