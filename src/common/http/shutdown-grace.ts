// A graceful stop with an end. Closing the server refuses new connections and closes idle ones at once;
// a request under way is still answered. A connection that stays busy — a client that stops sending
// its body, or stops reading a long response, and never goes away — would otherwise hold the process
// open without limit (Node waits for every connection, and an orchestrator then kills the process with
// whatever it was doing). After SHUTDOWN_GRACE_SECONDS those connections are closed, and the log says how many.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

export function registerShutdownGrace(fastify: FastifyInstance, graceSeconds: number, logger: Logger): void {
  fastify.addHook('preClose', (done) => {
    const server = fastify.server;
    const cut = setTimeout(() => {
      server.getConnections((_error, count) => {
        if (count > 0)
          logger.warn(
            { connections: count, grace_seconds: graceSeconds },
            'closing connections still busy when SHUTDOWN_GRACE_SECONDS ran out',
          );
        server.closeAllConnections();
      });
    }, graceSeconds * 1000);
    // The timer must not keep a process alive that has nothing else left to do.
    cut.unref();
    server.once('close', () => clearTimeout(cut));
    done();
  });
}
