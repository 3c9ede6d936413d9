import 'fastify';
import type { AuthContext } from './auth-context';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the access guard (a Fastify hook, access.guard.ts) on requests made with a valid credential. */
    auth?: AuthContext;
  }
}
