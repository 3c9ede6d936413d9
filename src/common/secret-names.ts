// The one rule that says which names carry a credential, wherever the service meets one: a header
// (X-API-Key, X-Admin-Token, X-License-Token, X-CSRF-Token, Authorization, Cookie), a query parameter
// (an asset link's signature, S3's X-Amz-Signature/-Credential/-Security-Token, or any credential sent
// there by mistake) or a body field (password, new_password, license_key, a set-password token).
// Logging redacts the value of every name it matches.

/**
 * Judged case-insensitively with `-` and `_` (and any other separator) dropped, so every spelling of
 * a name matches: `X-Admin-Token`, `admin_token`, `ADMINTOKEN`. Over-matching (`idempotency-key`) only
 * hides a value from a log; under-matching leaks one.
 */
const SECRET_NAME = /(?:key|token|password|passwd|secret|signature|sig|authorization|cookie|credential|session)$/;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

export const REDACTED = '[redacted]';

/** Plain objects and arrays this deep are walked; deeper values are left as they are (log lines are shallow). */
const MAX_DEPTH = 6;

/**
 * A copy of `value` with the value of every secret-named key replaced by `[redacted]` (headers, a
 * query object, a body), at any depth; anything that is not a plain object or array is kept as is.
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: unknown) => redactSecrets(item, depth + 1)) as T;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] = isSecretName(key) ? REDACTED : redactSecrets(item, depth + 1);
  }
  return copy as T;
}
