// The operators' queue board at /admin/queues (bull-board): waiting, active, delayed, failed and
// completed jobs of every region's media queue and of the webhooks queue; retry, promote or remove one
// (nothing else: queue-board-routes.ts). A change made with the cookie needs this origin and the
// sign-in's CSRF token (queue-board-csrf.ts); every refusal is the error envelope.
// Behind the admin token: `X-Admin-Token` (curl), or a browser signs in once with the token on a form
// and gets an HttpOnly, SameSite=Strict cookie for /admin/queues (8 h; a new ADMIN_TOKEN voids it).
// The token never travels in a URL, so it never lands in a request log or the browser history.
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHmac } from 'node:crypto';
import { secretsEqual } from '../auth/api-key';
import { adminTokenError, isAdminToken, presentedAdminToken } from '../auth/admin-token';
import type { AppConfig } from '../common/config/config';
import type { CredentialAttempts } from '../auth/credential-attempts';
import { READ_METHODS } from '../auth/roles';
import { checkBrowserOrigin, checkCrossSite } from '../auth/same-origin';
import { ApiError } from '../common/errors';
import { QueueOwner } from '../queues/queue-owner';
import { regionsKey } from '../queues/keys';
import { boardCsrfToken, CSRF_COOKIE, CSRF_HEADER, csrfCookie } from './queue-board-csrf';
import { boardError, QueueBoardAdapter } from './queue-board-routes';
import type { RedisClient } from '../common/redis/redis.module';

export const QUEUE_BOARD_PATH = '/admin/queues';
const logger = new Logger('QueueBoard');
const COOKIE = 'mj_queue_board';
const SESSION_SECONDS = 8 * 3600;
const REFRESH_MS = 5000;

/** The rest of an HTML page's protective headers come from common/http/security-headers.ts. */
const SECURITY_HEADERS = { 'Cache-Control': 'no-store' };

function sign(adminToken: string, expires: number): string {
  return createHmac('sha256', `queue-board:${adminToken}`).update(String(expires)).digest('base64url');
}

function cookieValue(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The sign-in page: the only HTML of the board that is ours (no script, posts the token to /session). */
function signInPage(failed: boolean): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mediajobs queues — sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem">
<h1>mediajobs queues</h1>
<p>The queue board is for operators. Sign in with the admin token (<code>ADMIN_TOKEN</code>).</p>
${failed ? '<p role="alert" style="color: #b00020">That token is not valid.</p>' : ''}
<form method="post" action="${QUEUE_BOARD_PATH}/session">
<label for="token">Admin token</label><br>
<input id="token" name="token" type="password" autocomplete="current-password" required style="width: 100%; padding: .4rem"><br><br>
<button type="submit">Sign in</button>
</form></body></html>`;
}

export interface QueueBoard {
  close(): Promise<void>;
}

/** Mounts the board on the API's Fastify instance (before `app.init()`). */
export async function setupQueueBoard(
  app: NestFastifyApplication,
  config: AppConfig,
  redis: RedisClient,
  /** Writes the envelope of anything thrown (common/http/error-response.ts sendError). */
  sendError: (error: unknown, request: FastifyRequest, reply: FastifyReply) => void,
  /** The failed-credential budget per IP (issue 12 item 6): the board takes the operator token too. */
  attempts: Pick<CredentialAttempts, 'reserve'>,
): Promise<QueueBoard> {
  const fastify = app.getHttpAdapter().getInstance();
  const secure = config.publicBaseUrl.startsWith('https:');
  const publicOrigin = new URL(config.publicBaseUrl).origin;
  const queues = new Map<string, Queue>();
  const serverAdapter = new QueueBoardAdapter().setBasePath(QUEUE_BOARD_PATH);
  const board = createBullBoard({
    queues: [],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'mediajobs queues' } },
  });
  // bull-board answers what its routes throw with its own body: thrown on instead, to the board
  // scope's error handler below, which writes the envelope (Fastify hands an error its handler throws
  // to the parent scope's handler).
  serverAdapter.setErrorHandler((error: Error) => {
    throw boardError(error);
  });

  const owner = app.get(QueueOwner);
  const add = (queue: Queue, description: string) => {
    if (queues.has(queue.name)) return;
    queues.set(queue.name, queue);
    board.addQueue(new BullMQAdapter(queue, { description }));
  };
  let refreshed = 0;
  /** Every region that ever had a worker gets its media queue on the board (checked at most every 5 s). */
  const refresh = async () => {
    if (Date.now() - refreshed < REFRESH_MS) return;
    refreshed = Date.now();
    // Redis unreachable: the board shows the queues it already has (its own pages report the outage) and
    // asks again at the next refresh; a page of the board never fails for the list of regions.
    const regions = await redis.smembers(regionsKey(config)).catch((error: unknown) => {
      logger.warn({ err: error }, 'queue board: the regions could not be read; showing the queues known so far');
      return [] as string[];
    });
    for (const region of [...new Set([config.region, ...regions])].sort())
      add(owner.queue('media', 'producer', region), `Media jobs of region ${region} (BullMQ id = job id)`);
  };
  add(owner.queue('webhooks', 'producer'), 'Webhook delivery attempts (any worker; job id = delivery id and attempt)');
  await refresh();

  const authorised = (request: FastifyRequest): boolean => {
    if (!config.adminToken) return false;
    const token = presentedAdminToken(request.headers);
    if (token !== undefined) return isAdminToken(config.adminToken, token);
    const [expires, signature] = (cookieValue(request, COOKIE) ?? '').split('.');
    return (
      Number(expires) > Date.now() / 1000 &&
      !!signature &&
      secretsEqual(signature, sign(config.adminToken, Number(expires)))
    );
  };

  /**
   * For a request the sign-in cookie authorised (the X-Admin-Token header needs none: no page of another
   * site can send a header): a change must pass the dashboard's cross-site rule with this sign-in's
   * token; a read hands the page the token when its cookie lacks it (a sign-in older than the token).
   */
  const guardCookieChange = (request: FastifyRequest, reply: FastifyReply): void => {
    // As authorised() reads it: a non-empty X-Admin-Token header is the credential, else the cookie.
    if (presentedAdminToken(request.headers) !== undefined) return;
    const session = cookieValue(request, COOKIE) ?? '';
    const csrfToken = boardCsrfToken(config.adminToken!, session);
    if (!READ_METHODS.has(request.method)) {
      checkCrossSite(request, { origin: publicOrigin, csrfToken, header: CSRF_HEADER, page: 'the queue board' });
    } else if (cookieValue(request, CSRF_COOKIE) !== csrfToken) {
      const maxAgeSeconds = Number(session.split('.')[0]) - Date.now() / 1000;
      void reply.header('Set-Cookie', csrfCookie(csrfToken, { path: QUEUE_BOARD_PATH, maxAgeSeconds, secure }));
    }
  };

  await fastify.register(
    async (scope: FastifyInstance) => {
      // The API answers a form body with 415 (send application/json, src/http-app.ts); the board's own
      // sign-in form is the one place a form is read, so this scope replaces the inherited parser.
      // Every other route of the board refuses a form (415), as the API does: no form changes a queue.
      if (scope.hasContentTypeParser('application/x-www-form-urlencoded'))
        scope.removeContentTypeParser('application/x-www-form-urlencoded');
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
        if (request.routeOptions.url === `${QUEUE_BOARD_PATH}/session`)
          return done(null, Object.fromEntries(new URLSearchParams(String(body))));
        done(Object.assign(new Error('Unsupported Media Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }), undefined);
      });
      scope.setErrorHandler((error, request, reply) => sendError(error, request, reply));
      scope.addHook('onSend', async (_request, reply) => {
        void reply.headers(SECURITY_HEADERS);
      });
      // The place each request holding a token took in the IP's budget, given back if the token is right.
      const pendingAttempts = new WeakMap<FastifyRequest, { refund(): Promise<void> }>();
      scope.addHook('onRequest', async (request, reply) => {
        const path = request.url.split('?')[0];
        const signingIn = path === `${QUEUE_BOARD_PATH}/session` && request.method === 'POST';
        const presents =
          signingIn || presentedAdminToken(request.headers) !== undefined || cookieValue(request, COOKIE) !== undefined;
        // Counted against the IP's budget before any token is compared and given back when it is right,
        // as for the API (CredentialAttempts.reserve): once the IP has spent its budget the right token
        // is refused too, so the board is no side door for guessing it.
        if (presents) {
          try {
            pendingAttempts.set(request, await attempts.reserve(request.ip));
          } catch (error) {
            if (!(error instanceof ApiError)) throw error;
            sendError(error, request, reply);
            return reply;
          }
        }
        if (signingIn) return;
        if (authorised(request)) {
          await pendingAttempts.get(request)?.refund();
          try {
            guardCookieChange(request, reply);
          } catch (error) {
            sendError(error, request, reply);
            return reply;
          }
          if (request.method === 'GET' && (path === QUEUE_BOARD_PATH || path.endsWith('/api/queues'))) await refresh();
          return;
        }
        const wantsPage = request.method === 'GET' && /text\/html/.test(String(request.headers.accept ?? ''));
        if (wantsPage) return reply.status(401).type('text/html; charset=utf-8').send(signInPage(false));
        const presented = presentedAdminToken(request.headers) !== undefined;
        sendError(adminTokenError(presented, `, or sign in at ${QUEUE_BOARD_PATH}`), request, reply);
        return reply;
      });

      scope.post<{ Body: { token?: string } | undefined }>('/session', async (request, reply) => {
        // Another site may not sign a browser in (login CSRF), as for the dashboard's sign-in.
        checkBrowserOrigin(request, publicOrigin);
        const token = request.body?.token ?? '';
        if (!config.adminToken || !isAdminToken(config.adminToken, token)) {
          return reply.status(401).type('text/html; charset=utf-8').send(signInPage(true));
        }
        await pendingAttempts.get(request)?.refund();
        const expires = Math.floor(Date.now() / 1000) + SESSION_SECONDS;
        const cookie = [
          `${COOKIE}=${expires}.${sign(config.adminToken, expires)}`,
          `Path=${QUEUE_BOARD_PATH}`,
          `Max-Age=${SESSION_SECONDS}`,
          'HttpOnly',
          'SameSite=Strict',
          ...(secure ? ['Secure'] : []),
        ].join('; ');
        const csrf = csrfCookie(boardCsrfToken(config.adminToken, cookie.split(';')[0].slice(COOKIE.length + 1)), {
          path: QUEUE_BOARD_PATH,
          maxAgeSeconds: SESSION_SECONDS,
          secure,
        });
        return reply.header('Set-Cookie', [cookie, csrf]).redirect(QUEUE_BOARD_PATH, 303);
      });

      await scope.register(serverAdapter.registerPlugin());
    },
    { prefix: QUEUE_BOARD_PATH },
  );

  return {
    close: async () => void (await Promise.allSettled([...queues.values()].map((queue) => owner.closeQueue(queue)))),
  };
}
