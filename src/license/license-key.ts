import { createHash } from 'node:crypto';
import { randomBase62 } from '../common/ids';

export const LICENSE_KEY_PATTERN = /^mjl_[0-9A-Za-z]{32,64}$/;

/** A new key: `mjl_` + 40 base62 characters (≈238 bits). Only its hash and prefix are ever stored. */
export function generateLicenseKey(): { key: string; hash: Buffer; prefix: string } {
  const key = `mjl_${randomBase62(40)}`;
  return { key, hash: hashLicenseKey(key), prefix: key.slice(0, 12) };
}

export function hashLicenseKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
