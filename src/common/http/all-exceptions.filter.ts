import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { RouteTable } from './route-table';
import { sendError } from './error-response';

/** The one global filter: ours, Nest's, validation, throttling and unknown errors all become the envelope. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly context: { docsUrl: string; routes: RouteTable; logger: Logger }) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), this.context);
  }
}
