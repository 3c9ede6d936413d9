// Each Nest route's access declaration (@RequireScope, @MembersOnly, @OwnSession, @Public, @AdminOnly,
// @Operational on the handler or its controller) copied into its Fastify route's config, where the
// access hook reads it (see access.guard.ts): the decorators stay the one source of truth.
import type { INestApplication } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { nestRoutes } from '../common/http/nest-routes';
import { ACCESS, type Access } from './auth.decorators';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's access declaration (a Nest route); absent on routes Nest does not own. */
    access?: Access;
  }
}

/**
 * Call after `NestFactory.create` and before `app.init()` (which registers the routes with Fastify,
 * taking each handler's route config along). A route without a declaration stops the start-up.
 */
export function declareRouteAccess(app: INestApplication): void {
  const reflector = app.get(Reflector);
  for (const { controller, name, handler } of nestRoutes(app)) {
    const access = reflector.getAllAndOverride<Access | undefined>(ACCESS, [handler, controller]);
    if (!access) throw new Error(`Route ${controller.name}.${name} declares no access rule (see auth.decorators.ts)`);
    const config: unknown = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler);
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...(config ?? {}), access }, handler);
  }
}
