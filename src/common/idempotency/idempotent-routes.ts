// Idempotency-Key is taken on POST routes only (docs/api-decisions.md §1), so the interceptor is attached to each
// POST route at start-up instead of being global: every other request (a job read) then skips Nest's
// interceptor pipeline (rxjs) altogether, which a global interceptor costs even when it does nothing.
import { RequestMethod, type INestApplication } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { nestRoutes } from '../http/nest-routes';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/** Call after `NestFactory.create` and before `app.init()` (when Nest builds each route's interceptors). */
export function applyIdempotencyToPosts(app: INestApplication): void {
  const interceptor = app.get(IdempotencyInterceptor);
  for (const { handler, method } of nestRoutes(app)) {
    if (method !== RequestMethod.POST && method !== RequestMethod.ALL) continue;
    // The metadata lives on the controller's method, shared by every app of the process: an app made earlier (a
    // closed test API) left its own interceptor there, whose database pool has ended — only this app's is kept.
    const others = ((Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? []).filter(
      (other) => !(other instanceof IdempotencyInterceptor),
    );
    // First, as the global interceptor ran before a route's own ones.
    Reflect.defineMetadata(INTERCEPTORS_METADATA, [interceptor, ...others], handler);
  }
}
