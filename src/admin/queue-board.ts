// The operators' queue board at /admin/queues (bull-board): waiting, active, delayed, failed and
// completed jobs of every region's media queue and of the webhooks queue; retry, promote or remove one.
// Behind the admin token: `X-Admin-Token` (curl), or a browser signs in once with the token on a form
// and gets an HttpOnly, SameSite=Strict cookie for /admin/queues (8 h; a new ADMIN_TOKEN voids it).
// The token never travels in a URL, so it never lands in a request log or the browser history.
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { HTTPStatus } from '@bull-board/api/dist/types.js';
import { FastifyAdapter } from '@bull-board/fastify';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { createHmac } from 'node:crypto';
import { secretsEqual } from '../auth/api-key';
import { isAdminToken } from '../auth/admin-token';
import type { AppConfig } from '../common/config/config';
import type { CredentialAttempts } from '../auth/credential-attempts';
import { ApiError } from '../common/errors';
import { QueueOwner } from '../common/queue-owner';
import { regionsKey } from '../common/queues';

export const QUEUE_BOARD_PATH = '/admin/queues';
const COOKIE = 'mj_queue_board';
const SESSION_SECONDS = 8 * 3600;
const REFRESH_MS = 5000;
const logger = new Logger('QueueBoard');

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

/**
 * BullMQ refusing an action on a job that is in another state (promoting a job that is not delayed) or
 * was removed meanwhile (another operator, the job ended): the operator's conflict or not-found, not a
 * server fault. BullMQ marks these only by message (src/classes/finished-errors in bullmq).
 */
function jobStateRefusal(error: Error): 404 | 409 | undefined {
  if (/^Job \S+ is not in the \w+ state\./.test(error.message)) return 409;
  if (/^Missing key for job \S+\./.test(error.message)) return 404;
  return undefined;
}

/** Mounts the board on the API's Fastify instance (before `app.init()`). */
export async function setupQueueBoard(
  app: NestFastifyApplication,
  config: AppConfig,
  redis: Redis,
  sendError: (error: ApiError, request: FastifyRequest, reply: FastifyReply) => void,
  /** The failed-credential budget per IP (issue 12 item 6): the board takes the operator token too. */
  attempts: Pick<CredentialAttempts, 'reserve'>,
): Promise<QueueBoard> {
  const fastify = app.getHttpAdapter().getInstance();
  const secure = config.publicBaseUrl.startsWith('https:');
  const queues = new Map<string, Queue>();
  const serverAdapter = new FastifyAdapter().setBasePath(QUEUE_BOARD_PATH);
  const board = createBullBoard({
    queues: [],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'mediajobs queues' } },
  });
  // bull-board answers anything its routes throw with 500 and the raw message: a body our JSON parser
  // refused (too deep, ill-formed text) is the client's 400, and a server error says nothing internal.
  serverAdapter.setErrorHandler((error: Error & { statusCode?: number }) => {
    // bull-board's type lists fewer statuses than Fastify's own errors carry (413, 415): sent as they are.
    const status = (
      error instanceof ApiError ? error.status : (error.statusCode ?? jobStateRefusal(error) ?? 500)
    ) as HTTPStatus;
    if (status >= 500) {
      logger.error(`queue board request failed: ${error.message}`, error.stack);
      return { status, body: { error: { key: 'ERRORS.INTERNAL_SERVER_ERROR' } } };
    }
    return { status, body: { error: { key: 'ERRORS.BAD_REQUEST' }, message: error.message } };
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
    const regions = await redis.smembers(regionsKey(config)).catch(() => [] as string[]);
    for (const region of [...new Set([config.region, ...regions])].sort())
      add(owner.queue('media', 'producer', region), `Media jobs of region ${region} (BullMQ id = job id)`);
  };
  add(owner.queue('webhooks', 'producer'), 'Webhook delivery attempts (any worker; job id = delivery id and attempt)');
  await refresh();

  const authorised = (request: FastifyRequest): boolean => {
    if (!config.adminToken) return false;
    const header = request.headers['x-admin-token'];
    if (typeof header === 'string' && header) return isAdminToken(config.adminToken, header);
    const [expires, signature] = (cookieValue(request, COOKIE) ?? '').split('.');
    return (
      Number(expires) > Date.now() / 1000 &&
      !!signature &&
      secretsEqual(signature, sign(config.adminToken, Number(expires)))
    );
  };

  await fastify.register(
    async (scope: FastifyInstance) => {
      // The API answers a form body with 415 (send application/json, src/http-app.ts); the board's own
      // sign-in form is the one place a form is read, so this scope replaces the inherited parser.
      if (scope.hasContentTypeParser('application/x-www-form-urlencoded'))
        scope.removeContentTypeParser('application/x-www-form-urlencoded');
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
        done(null, Object.fromEntries(new URLSearchParams(String(body)))),
      );
      scope.addHook('onSend', async (_request, reply) => {
        void reply.headers(SECURITY_HEADERS);
      });
      // The place each request holding a token took in the IP's budget, given back if the token is right.
      const pendingAttempts = new WeakMap<FastifyRequest, { refund(): Promise<void> }>();
      scope.addHook('onRequest', async (request, reply) => {
        const path = request.url.split('?')[0];
        const signingIn = path === `${QUEUE_BOARD_PATH}/session` && request.method === 'POST';
        const presents = signingIn || !!request.headers['x-admin-token'] || cookieValue(request, COOKIE) !== undefined;
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
          if (request.method === 'GET' && (path === QUEUE_BOARD_PATH || path.endsWith('/api/queues'))) await refresh();
          return;
        }
        const wantsPage = request.method === 'GET' && /text\/html/.test(String(request.headers.accept ?? ''));
        if (wantsPage) return reply.status(401).type('text/html; charset=utf-8').send(signInPage(false));
        const presented = request.headers['x-admin-token'];
        sendError(
          presented
            ? new ApiError('invalid_api_key', { param: 'X-Admin-Token', message: 'The operator token is not valid.' })
            : new ApiError('missing_api_key', {
                param: 'X-Admin-Token',
                message: `Send the operator token in the X-Admin-Token header, or sign in at ${QUEUE_BOARD_PATH}.`,
              }),
          request,
          reply,
        );
        return reply;
      });

      scope.post<{ Body: { token?: string } | undefined }>('/session', async (request, reply) => {
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
        return reply.header('Set-Cookie', cookie).redirect(QUEUE_BOARD_PATH, 303);
      });

      await scope.register(serverAdapter.registerPlugin());
    },
    { prefix: QUEUE_BOARD_PATH },
  );

  return {
    close: async () => void (await Promise.allSettled([...queues.values()].map((queue) => owner.closeQueue(queue)))),
  };
}
