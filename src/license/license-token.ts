// Licence tokens: compact JWS (RFC 7515) signed with EdDSA over Ed25519, using only node:crypto.
// Pure functions, so the signing and the strict verification are unit-tested without a server.
import { createHash, sign, verify, type KeyObject } from 'node:crypto';

export { parseSigningKey } from '../common/crypto/ed25519-private-key';

/** Explicit typing (RFC 8725 §3.11): a licence token can never be mistaken for another JWT. */
export const LICENSE_TOKEN_TYP = 'mj-license+jwt';
export const LICENSE_TOKEN_ALG = 'EdDSA';
// Far above a real token (~450 characters); bounds the work an attacker's header can cause.
const MAX_TOKEN_LENGTH = 4096;

export interface LicenseTokenClaims {
  license_id: string;
  activation_id: string;
  device_id: string;
  plan: string;
  /** Issued at, seconds since the epoch (the JWT `iat`). */
  iat: number;
  /** Seconds since the epoch after which the token is refused: online validation is then due. */
  grace_until: number;
  /** The licence's expiry, seconds since the epoch (the JWT `exp`). */
  exp: number;
}

export interface Ed25519PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

const B64URL = /^[A-Za-z0-9_-]+$/;

function encodeJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decodeJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The RFC 7638 thumbprint of the public key: a stable `kid` that changes when the key does. */
export function publicJwkOf(publicKey: KeyObject): Ed25519PublicJwk {
  const { x } = publicKey.export({ format: 'jwk' });
  if (typeof x !== 'string') throw new Error('not an Ed25519 public key');
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x }))
    .digest('base64url');
  return { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' };
}

export function signLicenseToken(claims: LicenseTokenClaims, privateKey: KeyObject, kid: string): string {
  const signingInput = `${encodeJson({ alg: LICENSE_TOKEN_ALG, typ: LICENSE_TOKEN_TYP, kid })}.${encodeJson(claims)}`;
  // Ed25519 hashes internally: the algorithm argument must be null.
  return `${signingInput}.${sign(null, Buffer.from(signingInput), privateKey).toString('base64url')}`;
}

/**
 * The claims of a token this key signed, or null for anything else: not three base64url parts,
 * a header other than {alg: EdDSA, typ, kid of this key} (no `alg: none`, no HS256 with the
 * public key as secret, no `crit` extensions), a bad signature, or claims of the wrong types.
 * Time is not judged here: the caller compares grace_until with its clock.
 */
export function verifyLicenseToken(token: string, publicKey: KeyObject, kid: string): LicenseTokenClaims | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => B64URL.test(part))) return null;
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeJson(headerPart);
  if (!isPlainObject(header)) return null;
  const headerKeys = Object.keys(header).sort().join(',');
  if (headerKeys !== 'alg,kid,typ') return null;
  if (header.alg !== LICENSE_TOKEN_ALG || header.typ !== LICENSE_TOKEN_TYP || header.kid !== kid) return null;
  const signature = Buffer.from(signaturePart, 'base64url');
  if (signature.length !== 64) return null;
  if (!verify(null, Buffer.from(`${headerPart}.${payloadPart}`), publicKey, signature)) return null;
  const claims = decodeJson(payloadPart);
  if (!isPlainObject(claims)) return null;
  const strings = ['license_id', 'activation_id', 'device_id', 'plan'] as const;
  const times = ['iat', 'grace_until', 'exp'] as const;
  if (!strings.every((name) => typeof claims[name] === 'string')) return null;
  if (!times.every((name) => Number.isSafeInteger(claims[name]))) return null;
  return {
    license_id: claims.license_id as string,
    activation_id: claims.activation_id as string,
    device_id: claims.device_id as string,
    plan: claims.plan as string,
    iat: claims.iat as number,
    grace_until: claims.grace_until as number,
    exp: claims.exp as number,
  };
}
