import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors';
import { secretsEqual } from './api-key';

/**
 * The origin a browser says a request comes from: `Origin`, or the origin of `Referer` when a
 * browser sent no Origin. Null when neither is there (not a browser, or one that sends neither).
 */
export function requestOrigin(request: FastifyRequest): string | null {
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '' && origin !== 'null') return origin;
  if (origin === 'null') return 'null';
  const referer = request.headers.referer;
  if (typeof referer !== 'string' || referer === '') return null;
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}

/**
 * For the public routes a browser uses before it has a session (sign-in, setting a password): a
 * request that says where it comes from must come from `publicOrigin`, so another site cannot sign a
 * visitor in to an account of its choosing (login CSRF). Clients other than browsers send neither
 * header and pass.
 */
export function checkBrowserOrigin(request: FastifyRequest, publicOrigin: string): void {
  const origin = requestOrigin(request);
  if (origin !== null && origin !== publicOrigin) {
    throw new ApiError('csrf_check_failed', {
      param: 'Origin',
      message: `Sign in from ${publicOrigin}; this request came from ${origin}.`,
    });
  }
}

/**
 * The one rule for a change made with a cookie (the dashboard's session, the queue board's sign-in):
 * it must come from `origin` (Origin, or Referer's origin) and carry the CSRF token of that cookie in
 * `header`, which only a page of this origin can read and send (403 csrf_check_failed otherwise).
 */
export function checkCrossSite(
  request: FastifyRequest,
  expected: { origin: string; csrfToken: string; header: string; page: string },
): void {
  const origin = requestOrigin(request);
  if (origin !== expected.origin) {
    throw new ApiError('csrf_check_failed', {
      param: 'Origin',
      message: `A change made with a session must come from ${expected.origin}; this one came from ${origin ?? 'an unknown origin'}.`,
    });
  }
  const header = request.headers[expected.header.toLowerCase()];
  const presented = Array.isArray(header) ? header[0] : header;
  if (!presented || !secretsEqual(presented, expected.csrfToken)) {
    throw new ApiError('csrf_check_failed', {
      param: expected.header,
      message: presented
        ? `The ${expected.header} does not belong to this session. Reload ${expected.page} and try again.`
        : `A change made with a session must carry the ${expected.header} header of the session.`,
    });
  }
}
