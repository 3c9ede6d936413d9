// Each Nest route's access declaration (@RequireScope, @MembersOnly, @OwnSession, @Public, @AdminOnly,
// @Operational on the handler or its controller) copied into its Fastify route's config, where the
// access hook reads it (see access.guard.ts): the decorators stay the one source of truth.
import type { INestApplication } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
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
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  const reflector = app.get(Reflector);
  for (const { metatype, instance } of discovery.getControllers()) {
    if (!metatype || !instance) continue;
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as (...args: unknown[]) => unknown;
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const access = reflector.getAllAndOverride<Access | undefined>(ACCESS, [handler, metatype]);
      if (!access) throw new Error(`Route ${metatype.name}.${name} declares no access rule (see auth.decorators.ts)`);
      const config: unknown = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler);
      Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...(config ?? {}), access }, handler);
    }
  }
}
