import type { FastifyInstance } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from './registry';

const labelNames = ['method', 'route', 'status', 'code'] as const;

const requests = new Counter({
  name: 'mediajobs_http_requests_total',
  help: 'HTTP requests by route, status and error code',
  labelNames,
  registers: [metricsRegistry],
});

const duration = new Histogram({
  name: 'mediajobs_http_request_duration_seconds',
  help: 'HTTP request latency by route, status and error code',
  labelNames,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** A route's counter and histogram children, made once: prom-client hashes label objects on every call. */
const children = new Map<string, { count: { inc(): void }; time: { observe(value: number): void } }>();

/** Counts every response, labelled by the route pattern (never the raw URL: ids would explode cardinality). */
export function registerMetricsHooks(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    const status = String(reply.statusCode);
    const code = request.errorCode ?? '';
    const key = `${request.method} ${route} ${status} ${code}`;
    let child = children.get(key);
    if (!child) {
      const labels = { method: request.method, route, status, code };
      child = { count: requests.labels(labels), time: duration.labels(labels) };
      children.set(key, child);
    }
    child.count.inc();
    child.time.observe(reply.elapsedTime / 1000);
    done();
  });
}
