import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client's connection closes before its response was sent, so work done only for
 * that response (a source probe) stops instead of running on for nobody.
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  if (response.destroyed) controller.abort();
  else
    response.once('close', () => {
      if (!response.writableFinished) controller.abort();
    });
  return controller.signal;
}
