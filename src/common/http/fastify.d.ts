import 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The error code answered, for metrics and logs. */
    errorCode?: string;
  }
}
