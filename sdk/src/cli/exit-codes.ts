// The exit code tells the error family, so a script can branch on it without parsing stderr.
import type { MediaJobsError } from '../errors.js';

export const EXIT_CODES = {
  usage: 2,
  auth_error: 3,
  billing_error: 4,
  rate_limit_error: 5,
  invalid_request_error: 6,
  resource_error: 7,
  processing_error: 8,
  server_error: 9,
  license_error: 10,
  connection_error: 11,
} as const;
/** Any other failure, including error families newer than this client. */
export const EXIT_UNKNOWN = 1;

export function exitCodeFor(error: MediaJobsError): number {
  return Object.prototype.hasOwnProperty.call(EXIT_CODES, error.type)
    ? EXIT_CODES[error.type as keyof typeof EXIT_CODES]
    : EXIT_UNKNOWN;
}

export function formatError(error: MediaJobsError): string {
  return `${error.code}: ${error.message}${error.docUrl ? ` (${error.docUrl})` : ''}`;
}
