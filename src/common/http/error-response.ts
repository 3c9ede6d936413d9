import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, toErrorObject } from '../errors/api-error';
import { classifyError } from '../errors/classify';
import type { RouteTable } from './route-table';

/** Writes the error envelope for anything thrown; the only place an error response is made. */
export function sendError(
  exception: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  context: { docsUrl: string; routes: RouteTable; logger: Logger },
): void {
  const classified = classifyError(exception);
  const { unexpected } = classified;
  let { error } = classified;
  if (error.code === 'route_not_found') {
    const allowed = context.routes.allowedMethods(request.url.split('?')[0]);
    if (allowed.length) error = new ApiError('method_not_allowed', { headers: { Allow: allowed.join(', ') } });
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
