// Builds the HTTP application (used by main.ts and by the tests): Fastify, request ids, the error
// envelope for everything, validation, metrics and the API docs.
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { AppModule } from './app.module';
import type { AppConfig } from './common/config/config';
import { AllExceptionsFilter } from './common/http/all-exceptions.filter';
import { RouteTable } from './common/http/route-table';
import { createValidationPipe } from './common/http/validation';
import { newId } from './common/ids';
import { createLogger } from './common/logger';
import { setupDocs } from './docs/setup-docs';
import { registerMetricsHooks } from './metrics/http-metrics';

export async function createHttpApp(config: AppConfig): Promise<NestFastifyApplication> {
  const logger = createLogger(config, 'api');
  const adapter = new FastifyAdapter({
    bodyLimit: config.maxJsonBodyBytes,
    trustProxy: false,
    genReqId: () => newId('req'),
    // Requests are logged by nestjs-pino; Fastify's own logger stays off.
    logger: false,
  });
  const routes = new RouteTable();
  const fastify = adapter.getInstance();
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    // pino-http (through nestjs-pino) reads the id from the raw request.
    (request.raw as typeof request.raw & { id?: string }).id = String(request.id);
  });
  // Nest routes Fastify's own errors (body parsing, unknown routes) through this filter too.
  const errorContext = { docsUrl: config.docsUrl, routes, logger };
  registerMetricsHooks(fastify);
  // Media bodies are handed to the upload route as a stream (never buffered); elsewhere they are refused.
  fastify.addContentTypeParser(/^(?:video\/|audio\/|application\/octet-stream)/, (request, payload, done) => {
    if (request.routeOptions.url === '/v1/uploads') return done(null, payload);
    done(
      Object.assign(new Error('Unsupported Media Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }),
      undefined,
    );
  });

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forApi(config, logger), adapter, {
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(PinoNestLogger));
  app.useGlobalFilters(new AllExceptionsFilter(errorContext));
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
  setupDocs(app, config);
  await app.init();
  await fastify.ready();
  return app;
}
