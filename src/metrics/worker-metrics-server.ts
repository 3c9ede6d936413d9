// The worker's Prometheus endpoint: `GET /metrics` on WORKER_METRICS_PORT (off when unset), bound to
// WORKER_METRICS_HOST (default 127.0.0.1). A worker opens no public port, so this is a bare node:http
// server answering nothing else; access follows the API's rule (metrics-access.ts), and every refusal is
// the error envelope with the API's codes (docs/api-decisions.md §1, issue 29 item 10).
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { envelopeOf } from '../common/http/error-response';
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
      const refuse = (error: ApiError) => this.refuse(response, error, request.method === 'HEAD');
      if (path !== '/metrics') return refuse(new ApiError('route_not_found'));
      if (request.method !== 'GET' && request.method !== 'HEAD')
        return refuse(new ApiError('method_not_allowed', { headers: { Allow: 'GET, HEAD' } }));
      const access = metricsAccess(this.config, {
        remoteAddress: request.socket.remoteAddress,
        authorization: request.headers.authorization,
        // The worker's port trusts no proxy: a forwarded request is not a loopback client's.
        forwardedFurther: forwardedFurther(request.headers, 1),
      });
      // The same answers as the API's /metrics (metrics.controller.ts).
      if (access === 'not_loopback') return refuse(new ApiError('route_not_found'));
      if (access === 'missing_token')
        return refuse(
          new ApiError('missing_api_key', {
            param: 'Authorization',
            message: 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.',
            headers: { 'WWW-Authenticate': 'Bearer' },
          }),
        );
      if (access === 'wrong_token')
        return refuse(
          new ApiError('invalid_api_key', {
            param: 'Authorization',
            message: 'The metrics token is not valid.',
            headers: { 'WWW-Authenticate': 'Bearer' },
          }),
        );
      metricsRegistry.metrics().then(
        (body) => response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(body),
        (error: unknown) => {
          this.logger.error({ err: error }, 'rendering /metrics failed');
          this.refuse(response, new ApiError('internal_error'), request.method === 'HEAD');
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

  private refuse(response: ServerResponse, error: ApiError, head: boolean): void {
    const { status, headers, body } = envelopeOf(error, this.config.docsUrl);
    response.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) }).end(head ? undefined : body);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
