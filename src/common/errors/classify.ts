// Turns anything thrown anywhere (our ApiError, Nest and Fastify errors, driver errors) into an
// ApiError, so every failure leaves the service as the one envelope.
import { HttpException } from '@nestjs/common';
import { ApiError } from './api-error';

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'Connection is closed',
  "Stream isn't writeable",
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Command timed out',
  'Reached the max retries per request limit',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'connect ECONNREFUSED',
  'DataSource is not initialized',
];

// TypeORM's word for a connection pg dropped while a query runner held it (the backend was terminated
// or PgBouncer lost its server connection, between two statements of a transaction): the runner is
// released on the driver's error event, and its next statement (or COMMIT) throws one of these, with
// nothing of the connection in the message.
const RELEASED_RUNNER_ERRORS = new Set(['QueryRunnerAlreadyReleasedError', 'QueryRunnerProviderAlreadyReleasedError']);

/** True for errors that mean Postgres, Redis or the object store is unreachable: a 503 the client may retry. */
export function isUnavailableError(error: unknown, depth = 0): boolean {
  // Duck-typed rather than `instanceof Error`: socket errors made by Node itself belong to another
  // realm when the code runs in a VM context (Jest does this), and must still be recognised.
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (CONNECTION_ERROR_CODES.has(code)) return true;
    // Postgres SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown,
    // terminated backend, idle-session timeout), 25P03 (the connection ended for an idle transaction),
    // 53300 too many connections.
    if (/^08/.test(code) || /^57P0[1235]$/.test(code) || code === '25P03' || code === '53300') return true;
  }
  // common/storage's StorageUnavailableError: the object store refused, timed out or answered 5xx.
  if (name === 'MaxRetriesPerRequestError' || name === 'StorageUnavailableError') return true;
  if (typeof name === 'string' && RELEASED_RUNNER_ERRORS.has(name)) return true;
  if (typeof message === 'string' && CONNECTION_MESSAGES.some((text) => message.includes(text))) return true;
  const nested =
    (error as { driverError?: unknown; cause?: unknown }).driverError ?? (error as { cause?: unknown }).cause;
  return nested !== undefined && isUnavailableError(nested, depth + 1);
}

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
}

export function classifyError(exception: unknown): { error: ApiError; unexpected: boolean } {
  if (exception instanceof ApiError) return { error: exception, unexpected: false };
  // Nest wraps Fastify's own 4xx errors (body parsing) in an HttpException: classify the original.
  const cause = exception instanceof HttpException ? (exception.cause as FastifyLikeError | undefined) : undefined;
  if (typeof cause?.code === 'string' && cause.code.startsWith('FST_')) return classifyError(cause);
  if (isUnavailableError(exception)) return { error: new ApiError('service_unavailable'), unexpected: false };

  const fastify = exception as FastifyLikeError;
  switch (fastify?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { error: new ApiError('invalid_json'), unexpected: false };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { error: new ApiError('request_too_large'), unexpected: false };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { error: new ApiError('unsupported_content_type', { param: 'Content-Type' }), unexpected: false };
    // The router's own refusals (through Fastify's frameworkErrors): a path that does not decode, or
    // a path segment longer than the router takes.
    case 'FST_ERR_BAD_URL':
      return {
        error: new ApiError('invalid_parameter', {
          message: 'The URL path is not valid: it holds a malformed percent-encoded sequence.',
        }),
        unexpected: false,
      };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return {
        error: new ApiError('invalid_parameter', { message: 'A segment of the URL path is too long.' }),
        unexpected: false,
      };
    // The docs' static files refuse a path that climbs out of their folder (`..`, `//`): no page there.
    case 'FST_STATIC_FORBIDDEN_PATH':
      return { error: new ApiError('route_not_found'), unexpected: false };
    default:
      break;
  }
  // JSON.parse failures that reach us without a Fastify code (e.g. from a custom parser).
  if (exception instanceof SyntaxError && fastify.statusCode === 400) {
    return { error: new ApiError('invalid_json'), unexpected: false };
  }
  // Text PostgreSQL cannot store: U+0000 in a text value (22021) or a jsonb string (22P05). It only
  // ever comes from the client (a path id, a name, metadata), so it is the client's invalid value.
  // (TypeORM wraps the driver's error in driverError; raw pool queries throw it as it is.)
  const driverError = (exception as { driverError?: unknown } | null)?.driverError ?? exception;
  const sqlState = (driverError as { code?: unknown } | null)?.code;
  if (sqlState === '22021' || sqlState === '22P05') {
    return {
      error: new ApiError('invalid_parameter', {
        message: 'A value in the request contains a character that cannot be stored (such as U+0000).',
      }),
      unexpected: false,
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404) return { error: new ApiError('route_not_found'), unexpected: false };
    if (status === 413) return { error: new ApiError('request_too_large'), unexpected: false };
    if (status === 415)
      return { error: new ApiError('unsupported_content_type', { param: 'Content-Type' }), unexpected: false };
    if (status === 400) return { error: new ApiError('invalid_parameter'), unexpected: false };
  }
  return { error: new ApiError('internal_error'), unexpected: true };
}
