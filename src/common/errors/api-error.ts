import { CATALOGUE, type ErrorCode, type ErrorType } from './catalogue';

export interface ApiErrorOptions {
  param?: string | null;
  details?: Record<string, unknown>;
  message?: string;
  /** Seconds for the Retry-After header; defaults to details.retry_after_seconds when present. */
  retryAfterSeconds?: number;
  /** Extra response headers (e.g. Allow on 405). */
  headers?: Record<string, string>;
}

/** The one error class the service throws for anything a client should see. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly details?: Record<string, unknown>;
  readonly retryAfterSeconds?: number;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(options.message ?? CATALOGUE[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.param = options.param ?? null;
    this.details = options.details;
    this.headers = options.headers;
    const fromDetails = options.details?.retry_after_seconds;
    this.retryAfterSeconds = options.retryAfterSeconds ?? (typeof fromDetails === 'number' ? fromDetails : undefined);
  }

  get status(): number {
    return CATALOGUE[this.code].status;
  }

  get type(): ErrorType {
    return CATALOGUE[this.code].type;
  }
}

/** The specification's error object (section 2.1). */
export interface ErrorObject {
  type: ErrorType;
  code: string;
  message: string;
  param: string | null;
  request_id: string;
  doc_url: string;
  retryable: boolean;
  details?: Record<string, unknown>;
}

export function docUrlFor(docsUrl: string, code: string): string {
  return `${docsUrl}/errors.html#${code}`;
}

/**
 * The one serializer of error objects: HTTP responses, job views and webhook events all use it,
 * so a failed job's `error` and its job.failed event are the same object byte for byte.
 */
export function toErrorObject(
  code: ErrorCode,
  context: { requestId: string; docsUrl: string },
  options: Pick<ApiErrorOptions, 'param' | 'details' | 'message'> = {},
): ErrorObject {
  const row = CATALOGUE[code];
  const object: ErrorObject = {
    type: row.type,
    code,
    message: options.message ?? row.message,
    param: options.param ?? null,
    request_id: context.requestId,
    doc_url: docUrlFor(context.docsUrl, code),
    retryable: row.retryable,
  };
  if (options.details !== undefined) object.details = options.details;
  return object;
}
