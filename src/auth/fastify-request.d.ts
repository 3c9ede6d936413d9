import 'fastify';
import type { AuthContext } from './auth-context';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the access guard on requests made with a valid credential. */
    auth?: AuthContext;
  }
}
