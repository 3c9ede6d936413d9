// The baseline of the metrics benchmark: bare Fastify rendering a prom-client registry with Node's
// default metrics only — what any Node service's /metrics costs before it reads anything of its own.
import Fastify from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { serve } from './serve';

const registry = new Registry();
collectDefaultMetrics({ register: registry });
const app = Fastify({ logger: false });
app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
serve(app, async () => undefined);
