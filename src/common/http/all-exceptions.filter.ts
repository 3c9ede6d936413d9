import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { IdempotentReplay } from '../idempotency/idempotency.interceptor';
import type { RouteTable } from './route-table';
import { sendError } from './error-response';

/** The one global filter: ours, Nest's, validation, throttling and unknown errors all become the envelope. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly context: { docsUrl: string; routes: RouteTable; logger: Logger }) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (exception instanceof IdempotentReplay) return sendReplay(exception, request, reply);
    sendError(exception, request, reply, this.context);
  }
}

/**
 * A stored response sent again for a repeated Idempotency-Key. A stored error keeps its body but
 * takes this request's id, so `error.request_id` still equals X-Request-Id; the first request's id
 * is in Original-Request-Id.
 */
function sendReplay(replay: IdempotentReplay, request: FastifyRequest, reply: FastifyReply): void {
  let body = replay.body;
  const error = (body as { error?: { request_id?: string } } | null)?.error;
  if (error?.request_id) {
    reply.header('Original-Request-Id', error.request_id);
    body = { error: { ...error, request_id: String(request.id) } };
  }
  for (const [name, value] of Object.entries(replay.headers)) reply.header(name, value);
  void reply
    .status(replay.status)
    .header('Idempotent-Replayed', 'true')
    .type('application/json; charset=utf-8')
    .send(body);
}
