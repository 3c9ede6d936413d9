// Session and link tokens (256 random bits, stored only as SHA-256) and the session cookie.
import { createHash, randomBytes } from 'node:crypto';

export const SESSION_COOKIE = 'mj_session';
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

/** The value of one cookie in a Cookie header; null when absent. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return null;
}

/**
 * HttpOnly (no script reads it), SameSite=Lax (not sent with cross-site POSTs or subresources),
 * Path=/ (the dashboard calls /v1), Secure in production (HTTPS only). Max-Age is the absolute
 * expiry; the idle expiry is the server's.
 */
export function sessionCookie(token: string, options: { maxAgeSeconds: number; secure: boolean }): string {
  return [
    `${SESSION_COOKIE}=${token}`,
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
