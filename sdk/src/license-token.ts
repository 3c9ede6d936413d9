// Offline verification of licence tokens (docs/api-decisions.md §7): a compact JWS signed with EdDSA (Ed25519),
// checked with node:crypto and the public key from GET /v1/license/public-key. No network, no
// dependency: a plugin can keep working for the licence's offline grace period.
//
// The rules, in order:
// 1. The token must be exactly `header.payload.signature` (base64url), with the header
//    {alg: "EdDSA", typ: "mj-license+jwt", kid} (kid equal to the key's when the JWK has one) and
//    a valid Ed25519 signature over `header.payload`; anything else is license_invalid.
// 2. Clock rollback. Pass `lastSeenAt`, the latest time this device has seen (store the returned
//    `lastSeenAt` after every check). When `now` is earlier than it, the clock went backwards;
//    a token whose issued_at (iat) is later than such a `now` is refused with offline_grace_expired
//    (details.reason "clock_rollback"): validate online, which uses the server's clock. A token
//    issued more than MAX_CLOCK_SKEW_SECONDS after `now` is refused the same way even without
//    `lastSeenAt`; a smaller lead is ordinary skew between the server's clock and this one.
// 3. Time is judged at max(now, lastSeenAt), so turning the clock back never extends anything:
//    at or after exp → license_expired; at or after grace_until → offline_grace_expired
//    (retryable: validate online for a fresh token, then retry).

import { createPublicKey, verify } from 'node:crypto';
import { LicenseError } from './errors.js';
import type { LicensePublicKey } from './types.js';

/** What a check needs of the JWK from GET /v1/license/public-key (a key stored without `kid` is checked without it). */
export type LicenseVerificationKey = Pick<LicensePublicKey, 'kty' | 'crv' | 'x'> &
  Partial<Pick<LicensePublicKey, 'kid'>>;

export const LICENSE_TOKEN_TYP = 'mj-license+jwt';
/** How far a token's issued_at may lie ahead of this clock before it counts as a rolled-back clock. */
export const MAX_CLOCK_SKEW_SECONDS = 300;
const MAX_TOKEN_LENGTH = 4096;
const B64URL = /^[A-Za-z0-9_-]+$/;

/** The claims the service signs. Times are whole seconds since the epoch. */
export interface LicenseTokenClaims {
  license_id: string;
  activation_id: string;
  device_id: string;
  plan: string;
  iat: number;
  grace_until: number;
  exp: number;
}

export interface VerifiedLicense {
  licenseId: string;
  activationId: string;
  deviceId: string;
  plan: string;
  issuedAt: Date;
  graceUntil: Date;
  expiresAt: Date;
  /** Store this and pass it as `lastSeenAt` next time: the latest time this device has seen. */
  lastSeenAt: Date;
  claims: LicenseTokenClaims;
}

export interface VerifyOfflineOptions {
  /** The `lastSeenAt` returned by the previous check on this device (see rule 2 above). */
  lastSeenAt?: Date | number;
}

const toMs = (time: Date | number): number => (time instanceof Date ? time.getTime() : time);

function refuse(code: string, message: string, retryable: boolean, details?: Record<string, unknown>): LicenseError {
  return new LicenseError({ type: 'license_error', code, message, retryable, details: details ?? null, status: null });
}

function invalid(reason: string): LicenseError {
  return refuse('license_invalid', `The licence token is not valid (${reason}). Validate the licence online.`, false);
}

function decodeJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readClaims(value: unknown): LicenseTokenClaims | null {
  if (!isRecord(value)) return null;
  const { license_id, activation_id, device_id, plan, iat, grace_until, exp } = value;
  if (typeof license_id !== 'string' || typeof activation_id !== 'string') return null;
  if (typeof device_id !== 'string' || typeof plan !== 'string') return null;
  if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(grace_until) || !Number.isSafeInteger(exp)) return null;
  return { license_id, activation_id, device_id, plan, iat, grace_until, exp } as LicenseTokenClaims;
}

/**
 * Verifies a licence token offline with the service's Ed25519 public key (a JWK) and returns its
 * claims, or throws LicenseError: license_invalid, license_expired or offline_grace_expired.
 */
export function verifyLicenseToken(
  token: string,
  publicKeyJwk: LicenseVerificationKey,
  now: Date | number = Date.now(),
  options: VerifyOfflineOptions = {},
): VerifiedLicense {
  if (publicKeyJwk?.kty !== 'OKP' || publicKeyJwk.crv !== 'Ed25519' || typeof publicKeyJwk.x !== 'string') {
    throw new TypeError('publicKeyJwk must be the Ed25519 JWK from GET /v1/license/public-key');
  }
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKeyJwk.x }, format: 'jwk' });

  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) throw invalid('not a token');
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => B64URL.test(part))) throw invalid('not a compact JWS');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeJson(headerPart);
  if (!isRecord(header) || Object.keys(header).sort().join(',') !== 'alg,kid,typ') throw invalid('unexpected header');
  if (header.alg !== 'EdDSA' || header.typ !== LICENSE_TOKEN_TYP) throw invalid('unexpected algorithm or type');
  if (typeof publicKeyJwk.kid === 'string' && header.kid !== publicKeyJwk.kid) throw invalid('signed by another key');
  const signature = Buffer.from(signaturePart, 'base64url');
  if (signature.length !== 64 || !verify(null, Buffer.from(`${headerPart}.${payloadPart}`), key, signature)) {
    throw invalid('bad signature');
  }
  const claims = readClaims(decodeJson(payloadPart));
  if (!claims) throw invalid('unexpected claims');

  const nowMs = toMs(now);
  const lastSeenMs = options.lastSeenAt === undefined ? undefined : toMs(options.lastSeenAt);
  const issuedMs = claims.iat * 1000;
  const clockWentBack = lastSeenMs !== undefined && nowMs < lastSeenMs;
  if ((clockWentBack && issuedMs > nowMs) || issuedMs > nowMs + MAX_CLOCK_SKEW_SECONDS * 1000) {
    throw refuse(
      'offline_grace_expired',
      'The licence token was issued after the time this clock shows; the clock was turned back. Validate online.',
      true,
      {
        reason: 'clock_rollback',
        issued_at: new Date(issuedMs).toISOString(),
        now: new Date(nowMs).toISOString(),
        ...(lastSeenMs === undefined ? {} : { last_seen_at: new Date(lastSeenMs).toISOString() }),
      },
    );
  }
  const effectiveMs = Math.max(nowMs, lastSeenMs ?? nowMs);
  if (effectiveMs >= claims.exp * 1000) {
    throw refuse('license_expired', 'The licence has expired. Renew it to continue.', false, {
      expires_at: new Date(claims.exp * 1000).toISOString(),
    });
  }
  if (effectiveMs >= claims.grace_until * 1000) {
    throw refuse('offline_grace_expired', 'The offline grace period has ended. Validate online, then retry.', true, {
      offline_grace_until: new Date(claims.grace_until * 1000).toISOString(),
    });
  }
  return {
    licenseId: claims.license_id,
    activationId: claims.activation_id,
    deviceId: claims.device_id,
    plan: claims.plan,
    issuedAt: new Date(issuedMs),
    graceUntil: new Date(claims.grace_until * 1000),
    expiresAt: new Date(claims.exp * 1000),
    lastSeenAt: new Date(effectiveMs),
    claims,
  };
}
