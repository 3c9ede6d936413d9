// Builds the HTTP application (used by main.ts and by the tests): Fastify, request ids, the error
// envelope for everything, validation, metrics and the API docs.
import { NestFactory } from '@nestjs/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RawServerDefault } from 'fastify';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { checkApiConfig, type AppConfig } from './common/config/config';
import { AllExceptionsFilter } from './common/http/all-exceptions.filter';
import { registerBodyRateLimit } from './common/http/body-rate';
import { registerRequestFraming, routedUrl } from './common/http/request-framing';
import { registerSecurityHeaders } from './common/http/security-headers';
import { sendClientError, sendError } from './common/http/error-response';
import { RouteTable } from './common/http/route-table';
import {
  createValidationPipe,
  illFormedTextPath,
  jsonDeeperThan,
  MAX_JSON_DEPTH,
  NotJsonBody,
} from './common/http/validation';
import { ApiError } from './common/errors';
import { newId } from './common/ids';
import { registerShutdownGrace } from './common/http/shutdown-grace';
import { createLogger, NestPinoLogger, registerRequestLog } from './common/logger';
import { setupQueueBoard } from './admin/queue-board';
import { AccessGuard } from './auth/access.guard';
import { CredentialAttempts } from './auth/credential-attempts';
import { declareRouteAccess } from './auth/route-access';
import { applyIdempotencyToPosts } from './common/idempotency/idempotent-routes';
import { REDIS } from './common/redis/redis.module';
import { setupDashboard } from './dashboard/setup-dashboard';
import { setupDocs } from './docs/setup-docs';
import { registerMetricsHooks } from './metrics/http-metrics';

export interface HttpAppOptions {
  /** Called with the Fastify instance before any route exists (the tests add their response checks here). */
  instrument?: (fastify: FastifyInstance) => void;
}

export async function createHttpApp(config: AppConfig, options: HttpAppOptions = {}): Promise<NestFastifyApplication> {
  checkApiConfig(config);
  const logger = createLogger(config, 'api', { buffered: true });
  const routes = new RouteTable();
  const errorContext = { docsUrl: config.docsUrl, routes, logger };
  const adapter = new FastifyAdapter({
    bodyLimit: config.maxJsonBodyBytes,
    // request.ip: the client behind the proxies named in TRUST_PROXY (their X-Forwarded-For), else the peer.
    trustProxy: config.trustProxy.length ? config.trustProxy : false,
    genReqId: () => newId('req'),
    rewriteUrl: routedUrl,
    // Requests are logged by registerRequestLog (one line each); Fastify's own logger stays off.
    logger: false,
    // The router's refusals (a path that does not decode, an overlong segment) and requests Node's
    // parser could not read get the envelope too, not Fastify's own bodies.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      sendError(error, request, reply, errorContext),
    clientErrorHandler: (error, socket) => sendClientError(error, socket, config.docsUrl),
  });
  const fastify = adapter.getInstance();
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerRequestLog(fastify, logger);
  registerSecurityHeaders(fastify, config);
  registerRequestFraming(fastify, config.docsUrl, (error, request, reply) =>
    sendError(error, request, reply, errorContext),
  );
  registerShutdownGrace(fastify, config.shutdownGraceSeconds, logger);
  registerBodyRateLimit(
    fastify,
    { minBytesPerSecond: config.requestBodyMinBytesPerSecond, windowMs: config.requestBodyRateWindowSeconds * 1000 },
    (error, request, reply) => sendError(error, request, reply, errorContext),
  );
  options.instrument?.(fastify);
  // Nest routes Fastify's own errors (body parsing, unknown routes) through this filter too.
  registerMetricsHooks(fastify);
  fastify.removeContentTypeParser('text/plain');
  // Media bodies are handed to the upload route as a stream (never buffered); elsewhere they are refused.
  fastify.addContentTypeParser(/^(?:video\/|audio\/|application\/octet-stream)/, (request, payload, done) => {
    if (request.routeOptions.url === '/v1/uploads') return done(null, payload);
    done(
      Object.assign(new Error('Unsupported Media Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }),
      undefined,
    );
  });

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forApi(config), adapter, {
    bufferLogs: true,
    abortOnError: false,
  });
  // JSON bodies: Fastify's own parser (prototype-poisoning checks included), then a nesting limit, so a
  // small but deeply nested body is a shape error rather than a stack overflow in the idempotency
  // hash or class-transformer later.
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>(
    'application/json',
    { bodyLimit: config.maxJsonBodyBytes },
    (request, body, done) =>
      parseJson(request, body.toString('utf8'), (error, value) => {
        if (error) return done(error, undefined);
        if (jsonDeeperThan(value, MAX_JSON_DEPTH)) {
          return done(
            new ApiError('invalid_parameter', {
              message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
            }),
            undefined,
          );
        }
        // A lone surrogate ("\ud800") is valid JSON but not text: refused here with its place, rather
        // than failing later where it is stored (a 500 the client would retry forever).
        const illFormed = illFormedTextPath(value);
        if (!illFormed) return done(null, value);
        done(
          new ApiError('invalid_parameter', {
            param: illFormed.path || null,
            message: `${illFormed.inKey ? 'A key' : 'The value'} at ${illFormed.path || 'the top level'} holds a lone UTF-16 surrogate (such as "\\ud800"): send well-formed Unicode text.`,
          }),
          undefined,
        );
      }),
  );
  // Only JSON bodies (and the upload route's media) are taken. A form (curl -d without a
  // Content-Type) would otherwise be parsed into one odd key, and text/plain into a string: both
  // then fail validation with a message about the wrong thing. Kept unparsed and refused with 415 by
  // the validation pipe, after the access guard (see NotJsonBody); the upload route refuses it itself.
  app.useBodyParser<RawServerDefault>(
    ['application/x-www-form-urlencoded', 'text/plain'],
    {},
    (_request, _body, done) =>
      done(null, new NotJsonBody('This endpoint takes JSON: send the body with Content-Type: application/json.')),
  );
  // Authentication, rate limits and maintenance (docs/api-decisions.md §2 steps 1–3) run in a Fastify hook before
  // Nest's pipeline; each route's access declaration reaches Fastify as its route config.
  declareRouteAccess(app);
  applyIdempotencyToPosts(app);
  app.get(AccessGuard).register(fastify, (error, request, reply) => sendError(error, request, reply, errorContext));
  app.useLogger(new NestPinoLogger(logger));
  app.useGlobalFilters(new AllExceptionsFilter(errorContext));
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
  setupDocs(app, config);
  setupDashboard(app, config, (error, request, reply) => sendError(error, request, reply, errorContext));
  const board = await setupQueueBoard(
    app,
    config,
    app.get(REDIS),
    (error, request, reply) => sendError(error, request, reply, errorContext),
    app.get(CredentialAttempts),
  );
  fastify.addHook('onClose', () => board.close());
  await app.init();
  await fastify.ready();
  return app;
}
