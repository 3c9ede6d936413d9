// Typed errors: one class per `type` family of the specification (section 7), a base class for
// families and codes this version does not know yet (section 9: clients must tolerate new codes),
// and ConnectionError / TimeoutError for requests that got no response at all.

import type { RetryStopReason } from './retry.js';
import type { ErrorObject, ErrorType, JobView } from './types.js';

export interface MediaJobsErrorFields {
  type: string;
  code: string;
  message: string;
  param?: string | null;
  requestId?: string | null;
  docUrl?: string | null;
  retryable: boolean;
  details?: Record<string, unknown> | null;
  /** HTTP status; null when there was no response, or for the error of a finished job. */
  status?: number | null;
  attempts?: number;
}

export class MediaJobsError extends Error {
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly docUrl: string | null;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | null;
  readonly status: number | null;
  /** Retries made after the first request before this error was raised (spec 7.11's "attempts"). */
  attempts: number;
  /**
   * Why the client raised this instead of retrying (RETRY_STOP_REASONS has it in words); null for an
   * error that did not come from a request (a failed job's error, a webhook check).
   */
  retryStopReason: RetryStopReason | null = null;

  constructor(fields: MediaJobsErrorFields) {
    super(fields.message);
    this.name = new.target.name;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param ?? null;
    this.requestId = fields.requestId ?? null;
    this.docUrl = fields.docUrl ?? null;
    this.retryable = fields.retryable;
    this.details = fields.details ?? null;
    this.status = fields.status ?? null;
    this.attempts = fields.attempts ?? 0;
  }
}

export class AuthError extends MediaJobsError {}
export class BillingError extends MediaJobsError {}
export class RateLimitError extends MediaJobsError {}
export class InvalidRequestError extends MediaJobsError {}
export class ResourceError extends MediaJobsError {}
export class ProcessingError extends MediaJobsError {
  /** The finished job, when waitForJob raised this for a failed or cancelled job. */
  job: JobView | null = null;
}
/**
 * `output_check_failed`: the item's output was made, measured, and failed one of its own checks; it was
 * not charged. `check`, `expected` and `measured` say which and by how much (also in `details`).
 */
export class OutputCheckFailedError extends ProcessingError {
  get check(): string | null {
    return typeof this.details?.check === 'string' ? this.details.check : null;
  }
  get expected(): string | null {
    return typeof this.details?.expected === 'string' ? this.details.expected : null;
  }
  get measured(): string | number | null {
    const value = this.details?.measured;
    return typeof value === 'string' || typeof value === 'number' ? value : null;
  }
}
export class ServerError extends MediaJobsError {}
export class LicenseError extends MediaJobsError {}

/** No response arrived: the connection failed or was dropped. Always retryable. */
export class ConnectionError extends MediaJobsError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super({ type: 'connection_error', code: options.code ?? 'connection_error', message, retryable: true });
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

/** No response within `timeoutMs` (a subclass, so `catch (e instanceof ConnectionError)` covers both). */
export class TimeoutError extends ConnectionError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { code: options.code ?? 'timeout_error', cause: options.cause });
  }
}

const CLASS_BY_TYPE: Record<ErrorType, typeof MediaJobsError> = {
  auth_error: AuthError,
  billing_error: BillingError,
  rate_limit_error: RateLimitError,
  invalid_request_error: InvalidRequestError,
  resource_error: ResourceError,
  processing_error: ProcessingError,
  server_error: ServerError,
  license_error: LicenseError,
};

function classFor(type: ErrorObject['type']): typeof MediaJobsError {
  return Object.prototype.hasOwnProperty.call(CLASS_BY_TYPE, type) ? CLASS_BY_TYPE[type as ErrorType] : MediaJobsError;
}

/** Statuses that mean "try again later" when the body does not say (spec 7.10). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}

/** Reads `{error: {...}}` from a parsed body; null when the body is not our envelope. */
export function parseEnvelope(body: unknown): ErrorObject | null {
  if (typeof body !== 'object' || body === null) return null;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return null;
  const { type, code, message } = error as Record<string, unknown>;
  if (typeof type !== 'string' || typeof code !== 'string' || typeof message !== 'string') return null;
  return error as ErrorObject;
}

/** Builds the typed error for an error object (from a response or from a job view). */
export function errorFromObject(
  error: ErrorObject,
  context: { status: number | null; requestId?: string | null },
  forceClass?: typeof MediaJobsError,
): MediaJobsError {
  const ErrorClass =
    forceClass ?? (error.code === 'output_check_failed' ? OutputCheckFailedError : classFor(error.type));
  return new ErrorClass({
    type: error.type,
    code: error.code,
    message: error.message,
    param: error.param,
    requestId: error.request_id ?? context.requestId,
    docUrl: error.doc_url,
    // A missing flag falls back to the status, so an older or newer server cannot make us hammer it.
    retryable:
      typeof error.retryable === 'boolean'
        ? error.retryable
        : context.status !== null && isRetryableStatus(context.status),
    details: error.details,
    status: context.status,
  });
}

/** A response that is not the envelope (a proxy's HTML 502, an empty body): judged by its status alone. */
export function errorFromBareStatus(status: number, requestId: string | null, bodySnippet: string): MediaJobsError {
  const [ErrorClass, type]: [typeof MediaJobsError, string] =
    status >= 500
      ? [ServerError, 'server_error']
      : status === 429
        ? [RateLimitError, 'rate_limit_error']
        : [MediaJobsError, 'http_error'];
  const detail = bodySnippet.replace(/\s+/g, ' ').trim().slice(0, 200);
  return new ErrorClass({
    type,
    code: `http_${status}`,
    message: `The server answered HTTP ${status} without an error envelope${detail ? `: ${detail}` : '.'}`,
    requestId,
    retryable: isRetryableStatus(status),
    status,
  });
}
