import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

const labelNames = ['method', 'route', 'status', 'code'] as const;

const requests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests by route, status and error code',
  labelNames,
  registers: [metricsRegistry],
});

const duration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency by route, status and error code',
  labelNames,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** Counts every response, labelled by the route pattern (never the raw URL: ids would explode cardinality). */
export function registerMetricsHooks(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions?.url ?? 'unmatched',
      status: String(reply.statusCode),
      code: request.errorCode ?? '',
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });
}
