import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ApiError, toErrorObject } from '../errors/api-error';
import { CATALOGUE } from '../errors/catalogue';
import { newId } from '../ids';
import { classifyError } from '../errors/classify';
import type { RouteTable } from './route-table';

/** Writes the error envelope for anything thrown; the only place an error response is made. */
export function sendError(
  exception: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  context: { docsUrl: string; routes: RouteTable; logger: Logger },
): void {
  // Answered already (a request_timeout sent while the handler still read the body): the handler's
  // own failure that followed has nobody to go to.
  if (reply.sent) return;
  const classified = classifyError(exception);
  const { unexpected } = classified;
  let { error } = classified;
  if (error.code === 'route_not_found') {
    const allowed = context.routes.allowedMethods(request.url.split('?')[0]);
    // A route that exists with this very method (a wildcard's miss) is not found, not 405. HEAD
    // is served wherever GET is.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (allowed.length && !allowed.includes(method))
      error = new ApiError('method_not_allowed', { headers: { Allow: allowed.join(', ') } });
  }
  if (unexpected) {
    context.logger.error(
      { err: exception, request_id: request.id, route: request.routeOptions?.url },
      'unexpected exception',
    );
  } else if (error.code === 'service_unavailable') {
    context.logger.warn({ err: exception, request_id: request.id }, 'dependency unavailable');
  }
  request.errorCode = error.code;
  const body = {
    error: toErrorObject(error.code, { requestId: String(request.id), docsUrl: context.docsUrl }, error),
  };
  reply.header('X-Request-Id', request.id);
  if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
  for (const [name, value] of Object.entries(error.headers ?? {})) reply.header(name, value);
  // The body is JSON even when the request was not; a HEAD request gets the headers only.
  void reply.status(error.status).type('application/json; charset=utf-8').send(body);
}

/**
 * The envelope for a request Node's HTTP parser refused before Fastify saw it (a raw non-ASCII byte
 * or a control character in the request line, oversized headers): Fastify's clientErrorHandler,
 * which writes straight to the socket and then closes it.
 */
export function sendClientError(error: NodeJS.ErrnoException, socket: Socket, docsUrl: string): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('request_too_large', { message: 'The request headers are larger than the server accepts.' })
      : new ApiError('invalid_parameter', {
          message: 'The HTTP request is malformed (request line or headers) and could not be read.',
        });
  // A response to HEAD has no body (the parser may have read the method before it failed).
  const raw = (error as { rawPacket?: Buffer }).rawPacket;
  const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
  writeEnvelopeAndClose(socket, apiError, docsUrl, { withBody: !head });
  socket.destroy(error);
}

/**
 * The envelope written straight to a socket no route will answer (Node's parser refused the request,
 * or it is a CONNECT), with `Connection: close`; the caller then ends the socket.
 */
export function writeEnvelopeAndClose(
  socket: Duplex,
  apiError: ApiError,
  docsUrl: string,
  options: { withBody?: boolean } = {},
): void {
  if (!socket.writable) return;
  const { status, headers, body } = envelopeOf(apiError, docsUrl);
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${options.withBody === false ? '' : body}`,
  );
}

/**
 * The envelope of `apiError` as a bare HTTP answer (status, headers, JSON text) under a new request
 * id, for what the API's Fastify does not answer: a socket no route takes, the worker's metrics port.
 */
export function envelopeOf(
  apiError: ApiError,
  docsUrl: string,
): { status: number; headers: Record<string, string>; body: string } {
  const requestId = newId('req');
  const body = JSON.stringify({ error: toErrorObject(apiError.code, { requestId, docsUrl }, apiError) });
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'X-Request-Id': requestId,
    ...apiError.headers,
  };
  return { status: CATALOGUE[apiError.code].status, headers, body };
}
