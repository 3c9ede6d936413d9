// What of bull-board the queue board mounts, and how its refusals leave the service (issue 29 items 9
// and 10). Only the documented actions exist — retry, promote and remove one job — beside the reads;
// bull-board's other changes (add, obliterate, empty, pause/resume, edit a job's data, delay or
// priority, concurrency, rate limits, job schedulers, the bulk retry/promote/clean) are not routes at
// all, whoever asks. Each of them changes every customer's jobs at once or puts a job in a state the
// service did not create (a job with edited data would be billed against another hold), and none is
// needed to run the service: maintenance mode pauses intake (PUT /v1/admin/maintenance), and an
// operator with many jobs to retry scripts the single retry with X-Admin-Token.
// bull-board answers its own refusals with `{error: {key: 'ERRORS.…'}}` and 200-less statuses; here
// each becomes an ApiError, so the board's scope answers it with the envelope (docs/api-decisions.md §1).
import type { AppControllerRoute } from '@bull-board/api/typings/app';
import { FastifyAdapter } from '@bull-board/fastify';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ApiError } from '../common/errors';

/** The changes the board keeps (bull-board's routes, relative to the board's path). */
const KEPT_CHANGES = new Set([
  'PUT /api/queues/:queueName/:jobId/retry',
  'PUT /api/queues/:queueName/:jobId/promote',
  'PUT /api/queues/:queueName/:jobId/clean',
]);

function kept(method: string, route: string): boolean {
  return method === 'GET' || KEPT_CHANGES.has(`${method} ${route}`);
}

type ErrorBody = {
  error?: string | { key?: string; options?: Record<string, unknown> };
  message?: string | { key?: string; options?: Record<string, unknown> };
};

/** bull-board's English for its error keys (the board page's own en-US messages), read once. */
let english: Record<string, string> | undefined;
function englishFor(key: string, options: Record<string, unknown> = {}): string | undefined {
  if (!english) {
    try {
      const ui = dirname(require.resolve('@bull-board/ui/package.json'));
      const messages = JSON.parse(readFileSync(join(ui, 'dist/static/locales/en-US/messages.json'), 'utf8')) as {
        ERRORS?: Record<string, string>;
      };
      english = messages.ERRORS ?? {};
    } catch {
      // A bull-board whose package no longer ships this file: its refusals keep the envelope's code and
      // the catalogue's message (sentence() of nothing adds none), only bull-board's own wording is lost.
      english = {};
    }
  }
  const text = english[key.replace(/^ERRORS\./, '')];
  return text?.replace(/\{\{(\w+)\}\}/g, (_match, name: string) => String(options[name] ?? ''));
}

/** bull-board's headlines have no full stop ("Queue not found"); the envelope's messages are sentences. */
function sentence(text: string | undefined): { message?: string } {
  if (!text) return {};
  return { message: /[.!?]$/.test(text) ? text : `${text}.` };
}

function textOf(message: ErrorBody['message']): string | undefined {
  if (typeof message === 'string') return message || undefined;
  return message?.key ? englishFor(message.key, message.options) : undefined;
}

/** The envelope's code for one of bull-board's refusals, with the path parameter it is about. */
export function boardRefusal(status: number, body: ErrorBody): ApiError {
  const headline = typeof body.error === 'string' ? { key: body.error } : (body.error ?? {});
  const key = headline.key ?? '';
  const message = textOf(body.message) ?? textOf(headline);
  if (status >= 500) return new ApiError('internal_error');
  if (status === 404) {
    const param = /QUEUE_NOT_FOUND/.test(key) ? 'queueName' : /JOB_NOT_FOUND/.test(key) ? 'jobId' : null;
    return new ApiError('resource_missing', { param, ...sentence(message) });
  }
  // A job a worker holds right now (removing it): it is free again once the worker is done.
  if (status === 409) return new ApiError('resource_locked', sentence(message));
  return new ApiError('invalid_parameter', sentence(message));
}

/**
 * BullMQ refusing an action on a job that is in another state (promoting a job that is not delayed) or
 * was removed meanwhile (another operator, the job ended): the operator's 400 or 404, not a server
 * fault. BullMQ marks these only by message (src/classes/finished-errors in bullmq).
 */
export function boardError(error: Error): Error {
  if (error instanceof ApiError) return error;
  const notInState = /^Job (\S+) is not in the (\w+) state\./.exec(error.message);
  if (notInState)
    return new ApiError('invalid_parameter', {
      param: 'jobId',
      message: `Job ${notInState[1]} is not in the ${notInState[2]} state any more: reload the board.`,
    });
  if (/^Missing key for job \S+\./.test(error.message)) return new ApiError('resource_missing', { param: 'jobId' });
  // Fastify's own (a body it could not parse) and anything unexpected: classified by the envelope's writer.
  return error;
}

/** bull-board's Fastify adapter with the kept routes only, each refusal thrown rather than answered. */
export class QueueBoardAdapter extends FastifyAdapter {
  override setApiRoutes(routes: AppControllerRoute[]): FastifyAdapter {
    const mounted = routes.flatMap((route) => {
      const methods = [route.method].flat().map((method) => method.toUpperCase());
      const paths = [route.route].flat().filter((path) => methods.every((method) => kept(method, path)));
      if (!paths.length) return [];
      const handler: AppControllerRoute['handler'] = async (request) => {
        const response = await route.handler(request);
        if ((response.status ?? 200) >= 400) throw boardRefusal(response.status!, response.body as ErrorBody);
        return response;
      };
      return [{ ...route, route: paths, handler }];
    });
    return super.setApiRoutes(mounted);
  }
}
