// The account dashboard, a single-page app served under /dashboard: hashed assets cached for good,
// index.html revalidated each time, every client route (/dashboard/jobs/…) answered with index.html,
// and the strict header set of every HTML page (common/http/security-headers.ts). `/` and `/login` lead there.
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { contentSecurityPolicy } from '../common/http/security-headers';
import { sendStaticFile } from '../common/http/static-files';
import { loadDashboardFiles } from './dashboard-files';

/**
 * Scripts, styles and requests only from this origin (no inline script or style element), never in
 * a frame: the policy of every HTML page (common/http/security-headers.ts sets it, with the rest of the
 * set, on every HTML response). Inline style *attributes* set from script (progress bar widths, the
 * chart) go through the CSSOM, which style-src does not restrict.
 */
export const DASHBOARD_CSP = contentSecurityPolicy();

/** `sendError` writes the envelope (these routes are Fastify's own, outside Nest's exception filter). */
export function setupDashboard(
  app: NestFastifyApplication,
  config: AppConfig,
  sendError: (error: ApiError, request: FastifyRequest, reply: FastifyReply) => void,
): void {
  const files = loadDashboardFiles(config.dashboardDir);
  const fastify = app.getHttpAdapter().getInstance();

  fastify.get('/', (_request, reply) => void reply.redirect('/dashboard/', 302));
  fastify.get('/login', (_request, reply) => void reply.redirect('/dashboard/login', 302));
  const serve = (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    const path = request.params['*'] ?? '';
    const index = files.get('index.html');
    if (!index) {
      const message = 'The dashboard is not built on this server: run `npm run build`, then start the API again.';
      return sendError(new ApiError('route_not_found', { message }), request, reply);
    }
    const file = files.get(path);
    if (file && path !== 'index.html') return sendStaticFile(request, reply, file);
    // A missing asset is a 404 (never index.html under a script's name); any other path is a client route.
    if (path.startsWith('assets/') || /\.[a-z0-9]+$/i.test(path))
      return sendError(new ApiError('route_not_found'), request, reply);
    return sendStaticFile(request, reply, index);
  };
  fastify.get('/dashboard', serve);
  fastify.get('/dashboard/*', serve);
}
