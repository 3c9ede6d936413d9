// The request loop: one logical call = the first request plus the retries that decideRetry allows,
// all carrying the same Idempotency-Key, so a job submitted twice over a flaky network is charged once.

import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ApiPromise, PagePromise, responseInfo, type WithResponse } from './api-promise.js';
import {
  ConnectionError,
  MediaJobsError,
  TimeoutError,
  errorFromBareStatus,
  errorFromObject,
  parseEnvelope,
} from './errors.js';
import { decideRetry, parseRetryAfter } from './retry.js';
import type { ListResponse, RequestOptions } from './types.js';
import { VERSION } from './version.js';

export interface RetryEvent {
  /** The number of the retry about to be made: 1 for the first retry. */
  attempt: number;
  delayMs: number;
  /** The failure that caused the retry. */
  error: MediaJobsError;
}

/**
 * Where the client reports what it does: `console` works as is. `debug` gets one line per HTTP
 * exchange (method, path, status, request id, milliseconds), `warn` each retry and its cause. The API
 * key and bodies are never logged.
 */
export interface MediaJobsLogger {
  debug?(message: string, fields: Record<string, unknown>): void;
  warn?(message: string, fields: Record<string, unknown>): void;
}

export interface HttpClientOptions {
  /** Sent as X-API-Key. Falls back to MEDIAJOBS_API_KEY; licence-only use needs none. */
  apiKey?: string;
  /** For example https://api.example.com (without /v1). Falls back to MEDIAJOBS_BASE_URL. */
  baseUrl?: string;
  /** Lowers the retry caps of table 7.11 (0 turns retries off); it never raises them. */
  maxRetries?: number;
  /** Per-attempt time limit for receiving the response, in ms (default 60 000). */
  timeoutMs?: number;
  onRetry?: (event: RetryEvent) => void;
  logger?: MediaJobsLogger;
  /** Injected by tests so that backoff can be measured without waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** Injected by tests: a number in [0, 1) for the jitter. */
  random?: () => number;
}

/** A body that can be sent again on a retry: bytes, or a function that opens a fresh stream. */
export type UploadBody = Buffer | Uint8Array | string | Readable | (() => Readable);

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: UploadBody;
  contentType?: string;
  headers?: Record<string, string>;
  /** false: never send the API key (a signed asset link is its own credential). Default true. */
  auth?: boolean;
  options?: RequestOptions;
}

export const DEFAULT_TIMEOUT_MS = 60_000;

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class HttpClient {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly maxRetries: number | undefined;
  private readonly timeoutMs: number;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;
  private readonly logger: MediaJobsLogger | undefined;
  readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(options: HttpClientOptions = {}) {
    const baseUrl = options.baseUrl ?? process.env.MEDIAJOBS_BASE_URL;
    if (!baseUrl) throw new TypeError('mediajobs: pass baseUrl or set MEDIAJOBS_BASE_URL');
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey ?? process.env.MEDIAJOBS_API_KEY;
    this.maxRetries = options.maxRetries;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.onRetry = options.onRetry;
    this.logger = options.logger;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
  }

  /** Sends the request (with retries) at once; the promise gives the parsed JSON body, or withResponse(). */
  request<T>(request: HttpRequest): ApiPromise<T> {
    return new ApiPromise(this.requestJson<T>(request));
  }

  /** A list request whose result also iterates over every page (PagePromise). */
  list<T>(request: HttpRequest & { query?: Record<string, string | number | undefined> }): PagePromise<T> {
    const page = (startingAfter?: string): Promise<WithResponse<ListResponse<T>>> =>
      this.requestJson<ListResponse<T>>(
        startingAfter === undefined
          ? request
          : { ...request, query: { ...request.query, starting_after: startingAfter } },
      );
    return new PagePromise(page(), async (cursor) => (await page(cursor)).data);
  }

  private async requestJson<T>(request: HttpRequest): Promise<WithResponse<T>> {
    const { response, text, retries } = await this.send(request, true);
    const info = responseInfo(response, retries);
    if (text === '') return { data: undefined as T, response: info };
    try {
      return { data: JSON.parse(text) as T, response: info };
    } catch {
      throw new MediaJobsError({
        type: 'http_error',
        code: 'invalid_response',
        message: 'The server answered with a body that is not JSON.',
        retryable: false,
        requestId: info.requestId,
        status: response.status,
      });
    }
  }

  /** Sends the request (with retries) and returns the response with its body unread (downloads). */
  async requestStream(request: HttpRequest): Promise<Response> {
    return (await this.send(request, false)).response;
  }

  resolveUrl(pathOrUrl: string): URL {
    return new URL(pathOrUrl.startsWith('http') ? pathOrUrl : `${this.baseUrl}${pathOrUrl}`);
  }

  private async send(
    request: HttpRequest,
    readBody: boolean,
  ): Promise<{ response: Response; text: string; retries: number }> {
    const options = request.options ?? {};
    const url = this.resolveUrl(request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers = this.headers(request, url);
    // One key per logical call, created before the first attempt, so every retry repeats it.
    if (request.method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
    // A stream handed over as is can only be read once: such a call gets no retry.
    const replayable = typeof request.body !== 'object' || !('pipe' in request.body);
    const logged = { method: request.method, path: url.pathname };

    for (let retries = 0; ; retries += 1) {
      let error: MediaJobsError;
      let retryAfterSeconds: number | null = null;
      const started = Date.now();
      try {
        const result = await this.attempt(request, url, headers, options, readBody);
        const requestId = result.response.headers.get('x-request-id');
        this.logger?.debug?.('mediajobs response', {
          ...logged,
          status: result.response.status,
          request_id: requestId,
          ms: Date.now() - started,
          retry: retries,
        });
        if (result.response.ok) return { ...result, retries };
        error = this.errorFromResponse(result.response, result.text);
        retryAfterSeconds = parseRetryAfter(result.response.headers.get('retry-after'), Date.now());
      } catch (caught) {
        if (!(caught instanceof ConnectionError)) throw caught;
        this.logger?.debug?.('mediajobs no response', { ...logged, code: caught.code, ms: Date.now() - started });
        error = caught;
      }
      const decision = replayable
        ? decideRetry({
            retriesSoFar: retries,
            status: error.status,
            retryable: error.retryable,
            retryAfterSeconds,
            maxRetries: options.maxRetries ?? this.maxRetries,
            random: this.random(),
          })
        : ({ retry: false, reason: 'body_not_replayable' } as const);
      if (!decision.retry) {
        error.attempts = retries;
        error.retryStopReason = decision.reason;
        throw error;
      }
      this.logger?.warn?.('mediajobs retrying', {
        ...logged,
        code: error.code,
        status: error.status,
        request_id: error.requestId,
        retry: retries + 1,
        delay_ms: decision.delayMs,
      });
      this.onRetry?.({ attempt: retries + 1, delayMs: decision.delayMs, error });
      await this.sleep(decision.delayMs);
    }
  }

  /** One HTTP exchange. Throws ConnectionError / TimeoutError when no response arrives in time. */
  private async attempt(
    request: HttpRequest,
    url: URL,
    headers: Record<string, string>,
    options: RequestOptions,
    readBody: boolean,
  ): Promise<{ response: Response; text: string }> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    try {
      const body = bodyFor(request);
      const response = await fetch(url, {
        method: request.method,
        headers,
        body,
        signal,
        // Streams need half-duplex in Node's fetch; harmless for other bodies.
        ...(body !== undefined && typeof body === 'object' && Symbol.asyncIterator in body ? { duplex: 'half' } : {}),
      });
      // Error bodies are read in full; a download's success body is left to the caller.
      const text = readBody || !response.ok ? await response.text() : '';
      return { response, text };
    } catch (caught) {
      if (options.signal?.aborted) throw caught; // the caller cancelled: not ours to retry
      if (timedOut) {
        throw new TimeoutError(`No response from ${url.origin} within ${timeoutMs} ms.`, { cause: caught });
      }
      const reason = caught instanceof Error && caught.cause instanceof Error ? caught.cause.message : String(caught);
      throw new ConnectionError(`Could not reach ${url.origin}: ${reason}.`, { cause: caught });
    } finally {
      clearTimeout(timer);
    }
  }

  private headers(request: HttpRequest, url: URL): Record<string, string> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': `mediajobs-node/${VERSION}`,
    };
    // The key goes only to the configured service, never to another host a result URL may name.
    if (request.auth !== false && this.apiKey && url.origin === new URL(this.baseUrl).origin) {
      headers['x-api-key'] = this.apiKey;
    }
    if (request.json !== undefined) headers['content-type'] = 'application/json';
    if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/octet-stream';
    return { ...headers, ...lowerCaseKeys(request.headers), ...lowerCaseKeys(request.options?.headers) };
  }

  private errorFromResponse(response: Response, text: string): MediaJobsError {
    const requestId = response.headers.get('x-request-id');
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: judged by its status below
    }
    const envelope = parseEnvelope(parsed);
    return envelope
      ? errorFromObject(envelope, { status: response.status, requestId })
      : errorFromBareStatus(response.status, requestId, text);
  }
}

function bodyFor(request: HttpRequest): string | Uint8Array | Readable | undefined {
  if (request.json !== undefined) return JSON.stringify(request.json);
  if (typeof request.body === 'function') return request.body();
  return request.body;
}

function lowerCaseKeys(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
}
