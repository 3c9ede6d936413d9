// The worker's Prometheus endpoint: `GET /metrics` on WORKER_METRICS_PORT (off when unset), bound to
// WORKER_METRICS_HOST (default 127.0.0.1). A worker opens no public port, so this is a bare node:http
// server answering nothing else; access follows the API's rule (metrics-access.ts).
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { forwardedFurther, metricsAccess } from './metrics-access';
import { METRICS_CONTENT_TYPE, metricsRegistry } from './registry';

@Injectable()
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerMetricsServer.name);
  private server?: Server;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** The bound address (tests pass port 0); null when the endpoint is off. */
  address(): AddressInfo | null {
    return (this.server?.address() as AddressInfo | null) ?? null;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.workerMetricsPort === null) return;
    const server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
        response
          .writeHead(404, { 'content-type': 'text/plain' })
          .end('Not found: this port serves GET /metrics only.\n');
        return;
      }
      const access = metricsAccess(this.config, {
        remoteAddress: request.socket.remoteAddress,
        authorization: request.headers.authorization,
        // The worker's port trusts no proxy: a forwarded request is not a loopback client's.
        forwardedFurther: forwardedFurther(request.headers, 1),
      });
      if (access !== 'allowed') {
        const status = access === 'not_loopback' ? 404 : 401;
        response.writeHead(status, {
          'content-type': 'text/plain',
          ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
        });
        response.end(status === 401 ? 'Send Authorization: Bearer <METRICS_TOKEN>.\n' : 'Not found.\n');
        return;
      }
      metricsRegistry.metrics().then(
        (body) => response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(body),
        (error: unknown) => {
          this.logger.error({ err: error }, 'rendering /metrics failed');
          response.writeHead(500, { 'content-type': 'text/plain' }).end('Rendering the metrics failed.\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.workerMetricsPort!, this.config.workerMetricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const { address, port } = server.address() as AddressInfo;
    this.logger.log({ address, port }, 'worker metrics on GET /metrics');
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
