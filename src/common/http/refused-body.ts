// A request answered before its body was read (an upload over the limit) closes its connection after the
// answer. Closing while body bytes still arrive makes the kernel answer them with a reset (RST, not FIN),
// and a client still sending then loses the answer it was sent: it sees ECONNRESET or EPIPE instead of its
// 413. So after the answer the rest of the body is read and thrown away, up to REFUSED_BODY_DRAIN_BYTES or
// REFUSED_BODY_DRAIN_MS, whichever comes first, and only then is the connection closed: a client that has
// sent the rest of its body reads its answer; a hostile one cannot hold the connection longer than that.
import type { FastifyReply } from 'fastify';
import type { Socket } from 'node:net';

export const REFUSED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;
export const REFUSED_BODY_DRAIN_MS = 10_000;

/** Answers with `Connection: close`, then drains what is left of the body (bounded) before closing. */
export function closeAfterDraining(reply: FastifyReply): void {
  void reply.header('Connection', 'close');
  // The response's: a request whose body was stopped mid-way (destroyed) no longer holds its socket.
  const socket = reply.raw.socket;
  if (!socket || socket.destroyed) return;
  // Node ends a `Connection: close` answer with destroySoon: FIN, then destroy once it is out. Only the
  // FIN is sent here; the reading side stays open until the body is in or the bound is reached.
  socket.destroySoon = () => {
    socket.end();
    detachParser(socket);
    const limit = socket.bytesRead + REFUSED_BODY_DRAIN_BYTES;
    const close = (): void => {
      clearTimeout(timer);
      socket.off('data', counted);
      socket.destroy();
    };
    const counted = (): void => {
      if (socket.bytesRead >= limit) close();
    };
    const timer = setTimeout(close, REFUSED_BODY_DRAIN_MS);
    socket.on('data', counted); // read, counted and dropped
    socket.once('close', () => clearTimeout(timer));
    socket.resume();
  };
}

/**
 * Takes the socket back from Node's HTTP parser, which reads it from native code and stops reading when
 * the (refused, unread) request body is not consumed: the rest is raw bytes to drop, not HTTP.
 */
function detachParser(socket: Socket): void {
  const parser = (socket as Socket & { parser?: { _consumed?: boolean; unconsume(): void } }).parser;
  if (parser?._consumed) {
    parser.unconsume();
    parser._consumed = false;
  }
  for (const event of ['data', 'pause', 'resume']) socket.removeAllListeners(event);
  // The parser stopped the handle itself (the body was not taken), which the stream does not know of.
  const handle = (socket as Socket & { _handle?: { reading: boolean; readStart(): number } | null })._handle;
  if (handle && !handle.reading) {
    handle.reading = true;
    handle.readStart();
  }
}
