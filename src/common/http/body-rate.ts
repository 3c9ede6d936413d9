// A minimum rate for request bodies: a client sending its body slower than
// REQUEST_BODY_MIN_BYTES_PER_SECOND over a whole REQUEST_BODY_RATE_WINDOW_SECONDS window gets a
// 408 request_timeout and its connection closed, so slow bodies cannot hold connections, file
// descriptors and partial upload files for ever (the upload's partial file goes with the stream).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { ApiError } from '../errors/api-error';

export interface BodyRateOptions {
  minBytesPerSecond: number;
  windowMs: number;
}

interface Watched {
  request: FastifyRequest;
  reply: FastifyReply;
  socket: Socket;
  /** socket.bytesRead at the start of the current window. */
  bytesAtWindowStart: number;
  windowStart: number;
}

const DROP_AFTER_MS = 5000;

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Watches every request with a body until it is fully received. `send` writes the envelope (the
 * service's one error writer). Checked at half a window's interval by one timer for all requests.
 */
export function registerBodyRateLimit(
  fastify: FastifyInstance,
  options: BodyRateOptions,
  send: (error: ApiError, request: FastifyRequest, reply: FastifyReply) => void,
): void {
  const watched = new Set<Watched>();
  const minBytesPerWindow = (options.minBytesPerSecond * options.windowMs) / 1000;

  fastify.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket;
    if (hasBody(request) && !request.raw.complete) {
      watched.add({ request, reply, socket, bytesAtWindowStart: socket.bytesRead, windowStart: Date.now() });
    }
    done();
  });

  const timeOut = (entry: Watched): void => {
    const { request, reply } = entry;
    const error = new ApiError('request_timeout', {
      details: {
        min_bytes_per_second: options.minBytesPerSecond,
        window_seconds: options.windowMs / 1000,
      },
    });
    // Answer first, then drop the rest of the body (destroying the request closes the connection);
    // a client that does not read its answer either loses it after a moment.
    reply.header('Connection', 'close');
    send(error, request, reply);
    const drop = (): void => void request.raw.destroy(error);
    if (reply.raw.writableFinished) return drop();
    reply.raw.once('finish', drop);
    setTimeout(drop, DROP_AFTER_MS).unref();
  };

  const check = (): void => {
    const now = Date.now();
    for (const entry of watched) {
      const { request, reply, socket } = entry;
      if (request.raw.complete || reply.sent || socket.destroyed) {
        watched.delete(entry);
      } else if (now - entry.windowStart >= options.windowMs) {
        const received = socket.bytesRead - entry.bytesAtWindowStart;
        if (received < (minBytesPerWindow * (now - entry.windowStart)) / options.windowMs) {
          watched.delete(entry);
          timeOut(entry);
        } else {
          entry.bytesAtWindowStart = socket.bytesRead;
          entry.windowStart = now;
        }
      }
    }
  };
  const timer = setInterval(check, Math.max(100, Math.floor(options.windowMs / 2)));
  timer.unref();
  fastify.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    done();
  });
}
