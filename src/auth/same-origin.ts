import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors';

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
