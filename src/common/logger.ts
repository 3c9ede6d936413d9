import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import pino, { type Level, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { AppConfig } from './config/config';

/** Headers that carry secrets: never written to a log line. */
export const REDACTED_PATHS = [
  'req.headers["x-csrf-token"]',
  'req.headers["x-api-key"]',
  'req.headers["x-admin-token"]',
  'req.headers["x-license-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
];

/**
 * Query parameters that carry credentials: the signature of an asset link (a download for an hour),
 * S3 presigned-URL signatures and credentials, and an API key or token sent in the URL by mistake.
 */
const SECRET_QUERY_PARAMS =
  /^(signature|sig|api[_-]?key|key|token|access[_-]?token|x-amz-signature|x-amz-credential|x-amz-security-token)$/i;

/** `url` with the values of credential-carrying query parameters replaced by `[redacted]`. */
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
      return SECRET_QUERY_PARAMS.test(name.trim()) ? `${rawName}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, queryAt)}?${query}`;
}

/** How long a log line may wait in the buffer at low traffic before it is written. */
const FLUSH_INTERVAL_MS = 250;

/**
 * Readable lines for a person at a terminal (`LOG_FORMAT=pretty`, the default on a TTY outside
 * production): time, level, name, message, then the fields. Synchronous, so nothing is lost on exit.
 */
function prettyStream(): NodeJS.WritableStream {
  return pretty({
    colorize: Boolean(process.stdout.isTTY) || Boolean(process.env.FORCE_COLOR),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    messageFormat: '{if context}[{context}] {end}{msg}',
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
  const settings = { name, level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
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
  // The line holds no header and its URL is redacted above, so the header redaction (a copy of `req`
  // per line, ~8 µs of a job read) is left out for it; the output is the same.
  const lines = logger.child({}, { redact: [] });
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!/^\/(health|metrics)/.test(request.url)) {
      const line = {
        req: { id: request.id, method: request.method, url: redactUrl(request.url) },
        res: { statusCode: reply.statusCode },
        responseTime: Math.round(reply.elapsedTime),
      };
      if (reply.statusCode >= 500) lines.error(line, 'request errored');
      else lines.info(line, 'request completed');
    }
    done();
  });
}

/**
 * Nest's logger interface over pino, so framework and `new Logger(Context)` lines are JSON lines of
 * the same stream. Accepts both forms our code uses: `(message, context)` and `({ err, … }, message, context)`.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
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
