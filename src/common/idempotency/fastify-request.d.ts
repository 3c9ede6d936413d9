import 'fastify';
import type { IdempotencyClaim } from './idempotent-response';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the idempotency interceptor when this request claimed its Idempotency-Key. */
    idempotency?: IdempotencyClaim;
  }
}
