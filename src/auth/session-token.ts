// Session and link tokens (256 random bits, stored only as SHA-256) and the session cookie.
import { createHash, randomBytes } from 'node:crypto';

import { ApiError } from '../common/errors';

/** Session cookies are Secure in production (served over https behind its TLS proxy). */
export function secureCookies(config: { nodeEnv: string }): boolean {
  return config.nodeEnv === 'production';
}

/**
 * The session cookie's name: `__Host-` prefixed where cookies are Secure (production, served over
 * https), so a browser takes it only from this very host with Path=/ and no Domain — a sibling
 * subdomain cannot plant one that shadows it.
 */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-mj_session' : 'mj_session';
}
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** 32 random bytes, base64url: the secret the browser holds; the database keeps only its hash. */
export function generateToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export function isWellFormedToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/**
 * The session token of a Cookie header; null when there is none. Two session cookies (one planted
 * beside the real one, whichever the browser sends first) are refused rather than guessed between.
 */
export function readSessionCookie(header: string | undefined, secure: boolean): string | null {
  if (!header) return null;
  const name = sessionCookieName(secure);
  const values: string[] = [];
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) values.push(part.slice(index + 1).trim());
  }
  if (values.length > 1) {
    throw new ApiError('invalid_parameter', {
      param: 'Cookie',
      message: `The request carries ${values.length} ${name} cookies: send exactly one (sign out and in again to clear the others).`,
    });
  }
  return values[0] ?? null;
}

/**
 * HttpOnly (no script reads it), SameSite=Lax (not sent with cross-site POSTs or subresources),
 * Path=/ (the dashboard calls /v1), Secure in production (HTTPS only). Max-Age is the absolute
 * expiry; the idle expiry is the server's.
 */
export function sessionCookie(token: string, options: { maxAgeSeconds: number; secure: boolean }): string {
  return [
    `${sessionCookieName(options.secure)}=${token}`,
    'Path=/',
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

/** Tells the browser to drop the cookie (signed out, or the session is no longer valid). */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', { maxAgeSeconds: 0, secure });
}
