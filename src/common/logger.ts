import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import pino, { type Level, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { AppConfig } from './config/config';
import { isSecretName, REDACTED, redactSecrets } from './secret-names';

/**
 * Every log line's fields pass through this: the value of any field named like a credential
 * (secret-names.ts: a header such as x-api-key or cookie, a body field such as password, at any depth)
 * is written as `[redacted]`.
 */
export const REDACTING_FORMATTERS = { log: (object: Record<string, unknown>) => redactSecrets(object) };

/** `url` with the value of every credential-named query parameter (secret-names.ts) replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return url;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const rawName = equals < 0 ? pair : pair.slice(0, equals);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // A malformed escape: judge the name as sent.
      }
      return isSecretName(name) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, queryAt)}?${query}`;
}

/** How long a log line may wait in the buffer at low traffic before it is written. */
const FLUSH_INTERVAL_MS = 250;

/** A request's line (registerRequestLog) as a person reads it: `GET /v1/… 200 12 ms`, on one line. */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const req = log.req as { method?: string; url?: string } | undefined;
  const res = log.res as { statusCode?: number } | undefined;
  if (req?.method && res?.statusCode !== undefined)
    return `${req.method} ${req.url} ${res.statusCode} ${String(log.responseTime)} ms`;
  return `${typeof log.context === 'string' ? `[${log.context}] ` : ''}${String(log[messageKey])}`;
}

/**
 * Readable lines for a person at a terminal (`LOG_FORMAT=pretty`, the default on a TTY outside
 * production): time, level, name, message, then the fields; a request is one line (its fields are in
 * the message). Synchronous, so nothing is lost on exit.
 */
function prettyStream(): NodeJS.WritableStream {
  return pretty({
    colorize: Boolean(process.stdout.isTTY) || Boolean(process.env.FORCE_COLOR),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,req,res,responseTime',
    messageFormat: prettyMessage,
    sync: true,
  });
}

/**
 * JSON lines on stdout (or readable lines, see prettyStream). The API and worker write JSON through a 4 KiB buffer (one write per ~15 lines
 * instead of one per request: a write per request measured as ~5% of a job read's CPU time in
 * bench/reads), flushed every 250 ms and when the process exits; a SIGKILL can lose the last 4 KiB.
 * The CLI writes synchronously, so its lines never interleave with its output.
 */
export function createLogger(config: AppConfig, name: string, options: { buffered?: boolean } = {}): Logger {
  const settings = { name, level: config.logLevel, formatters: REDACTING_FORMATTERS };
  if (config.logFormat === 'pretty' && config.logLevel !== 'silent') return pino(settings, prettyStream());
  if (!options.buffered || config.logLevel === 'silent') return pino(settings);
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_INTERVAL_MS).unref();
  process.once('exit', () => destination.flushSync());
  return pino(settings, destination);
}

/**
 * One JSON line per response (request id, method, URL, status, time), written from a Fastify hook.
 * It replaced nestjs-pino's pino-http middleware, which ran through Nest's middleware layer on
 * every request and cost more than a third of a job read's CPU time (bench/reads). Ops endpoints
 * are polled constantly and are not logged.
 */
export function registerRequestLog(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!/^\/(health|metrics)/.test(request.url)) {
      const line = {
        req: { id: request.id, method: request.method, url: redactUrl(request.url) },
        res: { statusCode: reply.statusCode },
        responseTime: Math.round(reply.elapsedTime),
      };
      if (reply.statusCode >= 500) logger.error(line, 'request errored');
      else logger.info(line, 'request completed');
    }
    done();
  });
}

/**
 * Nest's own start-up narration (about 120 lines: each module initialised, each controller and every
 * route mapped) is at debug level, so that a start-up shows what a person needs: where the API listens.
 */
const NEST_START_UP_CONTEXTS: ReadonlySet<string> = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/**
 * Nest's logger interface over pino, so framework and `new Logger(Context)` lines are JSON lines of
 * the same stream. Accepts both forms our code uses: `(message, context)` and `({ err, … }, message, context)`.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write(NEST_START_UP_CONTEXTS.has(String(params.at(-1))) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    // Nest appends the logger's context as the last parameter.
    const context = params.length > 0 && typeof params[params.length - 1] === 'string' ? params.pop() : undefined;
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
    } else if (message !== null && typeof message === 'object') {
      this.logger[level]({ context, ...message }, params.length > 0 ? String(params[0]) : undefined);
    } else {
      // Nest's own errors come as (message, stack, context).
      const stack = typeof params[0] === 'string' ? params[0] : undefined;
      this.logger[level](stack ? { context, stack } : { context }, String(message));
    }
  }
}
