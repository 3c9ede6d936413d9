// Requests that are wrong before any route could judge them, answered with the envelope like the rest:
// a CONNECT (a tunnel request, which Node hands to a 'connect' listener and otherwise drops without a
// word — this server is no proxy), and a request with more than one Host header (Node keeps the first;
// a proxy in front may have routed by another, so the request is ambiguous: RFC 9112 §3.2 says 400).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors';
import { writeEnvelopeAndClose } from './error-response';

/** Every method some route of this server takes (the Allow of a 405 to CONNECT). */
const SERVED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/** Matches no route: where an ambiguous request is sent (Fastify's rewriteUrl), so no route's code sees it. */
const NO_ROUTE = '/.ambiguous-request';

/** Fastify's `rewriteUrl`: a request with several Host headers is routed nowhere (the hook below answers it). */
export function routedUrl(request: IncomingMessage): string {
  return hostHeaders(request.rawHeaders) > 1 ? NO_ROUTE : (request.url ?? '/');
}

export function registerRequestFraming(
  fastify: FastifyInstance,
  docsUrl: string,
  sendError: (error: ApiError, request: FastifyRequest, reply: FastifyReply) => void,
): void {
  fastify.server.on('connect', (_request, socket) => {
    writeEnvelopeAndClose(
      socket,
      new ApiError('method_not_allowed', {
        message: 'This server is not a proxy: CONNECT is not accepted. Send the request itself over HTTP(S).',
        headers: { Allow: SERVED_METHODS },
      }),
      docsUrl,
    );
    socket.end();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    if (hostHeaders(request.raw.rawHeaders) <= 1) return done();
    sendError(
      new ApiError('invalid_parameter', {
        param: 'Host',
        message: 'The request carries more than one Host header: send exactly one.',
        // What else arrives on this connection cannot be trusted to be framed as the client meant.
        headers: { Connection: 'close' },
      }),
      request,
      reply,
    );
  });
}

function hostHeaders(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === 4 && rawHeaders[i].toLowerCase() === 'host') count++;
  return count;
}
