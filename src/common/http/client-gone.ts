import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client goes away before its response was sent (its end of the connection closed:
 * an HTTP/1.1 client does not half-close while it waits), so work done only for that response (a
 * source probe) stops instead of running on for nobody. The connection is then closed at once: no
 * answer can reach that client, and a half-open socket would hold the server's shutdown.
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  const socket = reply.request.raw.socket;
  const gone = (): void => {
    release();
    if (response.writableFinished) return;
    controller.abort();
    socket.destroy();
  };
  // Keep-alive sockets serve many requests: this one's listeners go when its response is done.
  const release = (): void => {
    socket.off('end', gone);
    socket.off('close', gone);
    response.off('close', gone);
    response.off('finish', release);
  };
  if (socket.destroyed || socket.readableEnded) {
    controller.abort();
    return controller.signal;
  }
  socket.once('end', gone);
  socket.once('close', gone);
  response.once('close', gone);
  response.once('finish', release);
  return controller.signal;
}

/**
 * clientGoneSignal, made when first asked for: most requests never need it (a submit of an upload whose
 * verdict is cached probes nothing), and its listeners cost a submit about as much as its idempotency
 * hash. Made later it says the same: a client that went away before is seen by its closed socket.
 */
export function lazyClientGoneSignal(reply: FastifyReply): () => AbortSignal {
  let signal: AbortSignal | undefined;
  return () => (signal ??= clientGoneSignal(reply));
}
