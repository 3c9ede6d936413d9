// The route handlers of every Nest controller, read from Nest's metadata before `app.init()` registers
// them with Fastify: what a start-up step needs to attach per-route settings (route-access.ts,
// idempotency.module.ts) from one declaration instead of a per-request lookup.
import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';

export interface NestRoute {
  controller: abstract new (...args: never[]) => unknown;
  name: string;
  /** The controller's method: Nest copies its metadata onto the handler it gives Fastify. */
  handler: (...args: unknown[]) => unknown;
  method: RequestMethod;
}

export function nestRoutes(app: INestApplication): NestRoute[] {
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  const routes: NestRoute[] = [];
  for (const { metatype, instance } of discovery.getControllers()) {
    if (!metatype || !instance) continue;
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as NestRoute['handler'];
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const method = (Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined) ?? RequestMethod.GET;
      routes.push({ controller: metatype as NestRoute['controller'], name, handler, method });
    }
  }
  return routes;
}
