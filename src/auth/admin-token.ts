// The operator token (ADMIN_TOKEN) is read from a request and checked here and nowhere else: by the
// access guard for the admin API and by the queue board (header or sign-in form). The comparison hashes both sides first
// (secretsEqual), so it takes the same time whatever the presented value's length or content.
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../common/errors';
import { secretsEqual } from './api-key';

/**
 * The operator token a request presents in its X-Admin-Token header: the first one when the header came
 * more than once; undefined when it is absent or empty (then the queue board looks for its sign-in cookie).
 */
export function presentedAdminToken(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-admin-token'];
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined || value === '' ? undefined : value;
}

/** Whether `presented` is the operator token; never true while ADMIN_TOKEN is unset. */
export function isAdminToken(adminToken: string | null | undefined, presented: string | undefined): boolean {
  if (!adminToken || presented === undefined || presented === '') return false;
  return secretsEqual(presented, adminToken);
}

/** The refusal of a request without the right operator token (missing or wrong). */
export function adminTokenError(presented: boolean, signInHint = ''): ApiError {
  return presented
    ? new ApiError('invalid_api_key', { param: 'X-Admin-Token', message: 'The operator token is not valid.' })
    : new ApiError('missing_api_key', {
        param: 'X-Admin-Token',
        message: `Send the operator token in the X-Admin-Token header${signInHint}.`,
      });
}
