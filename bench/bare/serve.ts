import type { FastifyInstance } from 'fastify';

/** Listens on $PORT (loopback) with the readiness route the bench waits for; SIGTERM closes it all. */
export function serve(app: FastifyInstance, closeResources: () => Promise<unknown>): void {
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).catch((error: unknown) => {
    process.stderr.write(String(error));
    process.exit(1);
  });
  process.on(
    'SIGTERM',
    () =>
      void app
        .close()
        .then(closeResources)
        .then(() => process.exit(0)),
  );
}
