import 'fastify';
import type { AuthContext } from '../../auth/auth-context';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth guard on requests made with a valid API key. */
    auth?: AuthContext;
    /** The error code answered, for metrics and logs. */
    errorCode?: string;
  }
}
