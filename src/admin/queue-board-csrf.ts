// The queue board's CSRF token (issue 29 item 9). A change made with the board's sign-in cookie is
// judged by the dashboard's rule (auth/same-origin.ts checkCrossSite): this origin, and the token of
// that sign-in in a header. The token is derived from the sign-in cookie (an HMAC under the admin
// token, so a new ADMIN_TOKEN voids it with the cookie) and handed to the board's page in a readable
// cookie: bull-board's page sends its requests with axios, which copies the XSRF-TOKEN cookie into an
// X-XSRF-TOKEN header on requests to its own origin. Another site can neither read the cookie nor set
// the header, and SameSite=Strict keeps the sign-in cookie off its requests in the first place.
import { createHmac } from 'node:crypto';

export const CSRF_COOKIE = 'XSRF-TOKEN';
export const CSRF_HEADER = 'X-XSRF-TOKEN';

/** The CSRF token of one sign-in: `session` is the value of the board's sign-in cookie. */
export function boardCsrfToken(adminToken: string, session: string): string {
  return createHmac('sha256', `queue-board-csrf:${adminToken}`).update(session).digest('base64url');
}

/** The readable cookie that carries the token to the board's page (not HttpOnly: the page reads it). */
export function csrfCookie(token: string, options: { path: string; maxAgeSeconds: number; secure: boolean }): string {
  return [
    `${CSRF_COOKIE}=${token}`,
    `Path=${options.path}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
