// HTTP(S) to user-supplied URLs with every connection pinned to an address checked by checkUrl: the
// socket's DNS lookup answers only that address, so a name cannot be re-resolved (DNS rebinding)
// between the check and the connect, and each redirect hop is checked again before it connects.
// pinnedRequest follows a URL hop by hop (each hop: pinned-connection.ts); downloadToFile writes what it
// answers to a file within bounds of size and rate.
import { createHash } from 'node:crypto';
import { type FileHandle, open, rm } from 'node:fs/promises';
import * as http from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CONNECT_ERRORS,
  type ConnectFunction,
  defaultConnect,
  errorCode,
  fail,
  failureFromError,
  failureFromStatus,
  type PinnedFailure,
  type PinnedFailureCode,
  PinnedTimeoutError,
  requestOnce,
} from './pinned-connection';
import { type AllowList, checkUrl, type LookupFunction, toPolicy } from './safe-url';

export interface PinnedSuccess {
  ok: true;
  response: http.IncomingMessage;
  /** The URL that answered (after redirects). */
  url: URL;
  /** The checked address the connection went to. */
  address: string;
}

export type PinnedResult = PinnedSuccess | PinnedFailure;

export interface PinnedRequestOptions {
  allow: AllowList;
  lookup?: LookupFunction;
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Longest wait for the response headers (DNS, redirects included) and longest silence on the socket after. */
  timeoutMs: number;
  maxRedirects?: number;
  /** Statuses handed back as a response; default 2xx. Other statuses become failures. */
  acceptStatus?: (status: number) => boolean;
  signal?: AbortSignal;
  /** Opens the socket; tests inject a spy here. */
  connect?: ConnectFunction;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CROSS_ORIGIN_DROPPED = ['authorization', 'cookie', 'proxy-authorization'];

/** Resolves, checks and requests `raw`, following up to `maxRedirects` redirects, each hop checked again. */
export async function pinnedRequest(raw: string | URL, options: PinnedRequestOptions): Promise<PinnedResult> {
  const policy = toPolicy(options.allow);
  const maxRedirects = options.maxRedirects ?? 3;
  const accept = options.acceptStatus ?? ((status: number) => status >= 200 && status < 300);
  const controller = new AbortController();
  const onCallerAbort = (): void => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) throw options.signal.reason;
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const deadline = setTimeout(() => controller.abort(new PinnedTimeoutError('response timeout')), options.timeoutMs);

  let method = options.method ?? 'GET';
  let body = options.body;
  let headers: Record<string, string> = { 'user-agent': 'mediajobs', ...lowerCaseKeys(options.headers ?? {}) };
  let current: string | URL = raw;
  let handedOver = false;
  try {
    for (let hop = 0; ; hop++) {
      const check = await abortable(checkUrl(current, { allow: policy, lookup: options.lookup }), controller.signal);
      if (!check.ok) return fail('invalid_url', check.reason);

      let response: http.IncomingMessage | undefined;
      let address = '';
      let lastError: unknown;
      for (const candidate of check.addresses) {
        try {
          address = candidate;
          response = await requestOnce({
            url: check.url,
            address,
            method,
            headers,
            body,
            timeoutMs: options.timeoutMs,
            signal: controller.signal,
            connect: options.connect ?? defaultConnect,
          });
          break;
        } catch (error) {
          lastError = error;
          if (controller.signal.aborted || !CONNECT_ERRORS.has(errorCode(error))) break;
        }
      }
      if (!response) {
        if (controller.signal.aborted) throw controller.signal.reason;
        return failureFromError(lastError, options.timeoutMs);
      }

      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location !== undefined && !accept(status)) {
        response.destroy();
        if (hop >= maxRedirects)
          return fail('invalid_url', `The URL redirected more than ${maxRedirects} times.`, status);
        let next: URL;
        try {
          next = new URL(location, check.url);
        } catch {
          return fail('invalid_url', 'The URL redirected to an invalid location.', status);
        }
        if (next.origin !== check.url.origin) {
          headers = Object.fromEntries(
            Object.entries(headers).filter(([name]) => !CROSS_ORIGIN_DROPPED.includes(name)),
          );
        }
        if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('content-')));
        }
        current = next;
        continue;
      }
      if (!accept(status)) {
        response.destroy();
        return failureFromStatus(status);
      }
      // The caller's signal stays linked: aborting it later still stops the body.
      handedOver = true;
      return { ok: true, response, url: check.url, address };
    }
  } catch (error) {
    if (controller.signal.reason instanceof PinnedTimeoutError)
      return failureFromError(controller.signal.reason, options.timeoutMs);
    throw error;
  } finally {
    clearTimeout(deadline);
    if (!handedOver) options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

export interface DownloadOptions {
  allow: AllowList;
  lookup?: LookupFunction;
  maxBytes: number;
  /** Longest wait for the response headers and longest silence on the socket after (pinnedRequest). */
  timeoutMs: number;
  /** The whole download's bound, headers and body: past it the download stops as `timeout`. */
  totalMs: number;
  /**
   * The slowest a body may arrive: fewer than `bytesPerSecond` a second in each `windowMs` (counted
   * from the headers) stops it as `upstream_error`. A source trickling a byte now and then never falls
   * silent long enough for the idle timeout; without this it would hold a worker up to `totalMs`.
   */
  minRate?: { bytesPerSecond: number; windowMs: number };
  maxRedirects?: number;
  signal?: AbortSignal;
  connect?: ConnectFunction;
}

export type DownloadResult =
  | { ok: true; sizeBytes: number; sha256: string }
  | { ok: false; code: PinnedFailureCode | 'file_too_large' | 'timeout'; reason: string; status?: number };

class TooLargeError extends Error {}
/** Why a download was stopped from here (its bound), as opposed to by the caller's signal. */
class DownloadStopped extends Error {
  constructor(readonly result: Extract<DownloadResult, { ok: false }>) {
    super(result.reason);
  }
}

const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EFBIG', 'EACCES', 'EPERM', 'EISDIR', 'ENOENT']);

/**
 * Streams the URL's body into `destPath` (never whole in memory), hashing on the way. Over `maxBytes`
 * (announced or counted) it stops with `file_too_large`; on any failure the partial file is removed.
 */
export async function downloadToFile(
  raw: string | URL,
  destPath: string,
  options: DownloadOptions,
): Promise<DownloadResult> {
  // One signal stops everything: the caller's (a cancel, a worker's stop), the whole download's
  // bound, the minimum rate. Aborting it after the headers still destroys the body (pinnedRequest).
  const stop = new AbortController();
  const onCallerAbort = (): void => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) throw options.signal.reason;
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const bound = setTimeout(() => {
    const seconds = Math.round(options.totalMs / 1000);
    stop.abort(
      new DownloadStopped({
        ok: false,
        code: 'timeout',
        reason: `The source download did not finish within ${seconds} s.`,
      }),
    );
  }, options.totalMs);
  let rateCheck: NodeJS.Timeout | undefined;
  try {
    let result: PinnedResult;
    try {
      result = await pinnedRequest(raw, {
        allow: options.allow,
        lookup: options.lookup,
        method: 'GET',
        headers: { 'accept-encoding': 'identity' },
        timeoutMs: options.timeoutMs,
        maxRedirects: options.maxRedirects,
        signal: stop.signal,
        connect: options.connect,
      });
    } catch (error) {
      if (stop.signal.reason instanceof DownloadStopped) return stop.signal.reason.result;
      throw error;
    }
    if (!result.ok) return result;
    const counted = { bytes: 0 };
    const minRate = options.minRate;
    if (minRate && minRate.bytesPerSecond > 0) {
      const least = (minRate.bytesPerSecond * minRate.windowMs) / 1000;
      let before = 0;
      rateCheck = setInterval(() => {
        const arrived = counted.bytes - before;
        before = counted.bytes;
        if (arrived >= least) return;
        const reason =
          `The URL's server sent ${arrived} bytes in ${minRate.windowMs / 1000} s, slower than the minimum ` +
          `of ${minRate.bytesPerSecond} bytes a second.`;
        stop.abort(new DownloadStopped({ ok: false, code: 'upstream_error', reason }));
      }, minRate.windowMs);
    }
    return await writeBody(result.response, destPath, options, stop.signal, counted);
  } finally {
    clearTimeout(bound);
    clearInterval(rateCheck);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** The body into `destPath`, counted into `counted` as it arrives; `stop` aborted: the partial file goes. */
async function writeBody(
  response: http.IncomingMessage,
  destPath: string,
  options: DownloadOptions,
  stop: AbortSignal,
  counted: { bytes: number },
): Promise<DownloadResult> {
  const tooLarge = {
    ok: false,
    code: 'file_too_large',
    reason: `The file is larger than the limit of ${options.maxBytes} bytes.`,
  } as const;
  const announced = Number(response.headers['content-length'] ?? NaN);
  if (announced > options.maxBytes) {
    response.destroy();
    return tooLarge;
  }

  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      counted.bytes = size;
      if (size > options.maxBytes) return callback(new TooLargeError());
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  let file: FileHandle;
  try {
    file = await open(destPath, 'w');
  } catch (error) {
    response.destroy();
    throw error;
  }
  try {
    await pipeline(response, meter, file.createWriteStream());
    if (Number.isFinite(announced) && size !== announced) {
      throw Object.assign(new Error('body shorter than Content-Length'), { code: 'ERR_INCOMPLETE_BODY' });
    }
  } catch (error) {
    await rm(destPath, { force: true });
    if (error instanceof TooLargeError) return tooLarge;
    if (stop.reason instanceof DownloadStopped) return stop.reason.result;
    if (stop.aborted) throw stop.reason;
    // A local disk problem is ours, not the source's: let it surface as an error.
    if (DISK_ERRORS.has(errorCode(error))) throw error;
    return failureFromError(error, options.timeoutMs);
  }
  return { ok: true, sizeBytes: size, sha256: hash.digest('hex') };
}
