// Lets a media tool (ffprobe, ffmpeg) read a user-supplied URL without ever connecting to it itself:
// the tool gets a loopback URL, and every request it makes (Range seeks included) is forwarded
// through pinnedRequest, so each real connection goes to a checked address and redirects are
// checked hop by hop.
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { type ConnectFunction, failureFromError, type PinnedFailure } from './pinned-connection';
import { pinnedRequest } from './pinned-fetch';
import { type AllowList, checkUrl, type LookupFunction, toPolicy } from './safe-url';

export interface PinnedProxyOptions {
  allow: AllowList;
  lookup?: LookupFunction;
  /** Per forwarded request: wait for headers, and longest silence while streaming. */
  timeoutMs: number;
  maxRedirects?: number;
  connect?: ConnectFunction;
  /** Outside production: a private address's refusal names ALLOW_PRIVATE_URLS (CheckUrlOptions). */
  explainAllowList?: boolean;
}

/**
 * `value` is what `fn` returned. A failure is returned instead when the URL is refused before the
 * tool starts, or when any forwarded request failed (the tool's own result or error then only
 * reflects that failure: a 404 source is `invalid_url`, not "invalid media").
 */
export type ProxyOutcome<T> = { ok: true; value: T; sizeBytes: number | null } | PinnedFailure;

/**
 * The whole source's size as an answer tells it: the total of a `Content-Range`
 * (`bytes 0-99/12345`), or the `Content-Length` of a full (200) answer; null when it does not say.
 */
export function announcedSize(status: number, headers: http.IncomingHttpHeaders): number | null {
  const total = /\/(\d+)\s*$/.exec(headers['content-range'] ?? '')?.[1];
  if (total !== undefined) return Number(total);
  const length = headers['content-length'];
  if (status === 200 && length !== undefined && /^\d+$/.test(length)) return Number(length);
  return null;
}

const FORWARDED_REQUEST_HEADERS = [
  'range',
  'if-range',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
];
const FORWARDED_RESPONSE_HEADERS = [
  'content-type',
  'content-length',
  'content-range',
  'content-encoding',
  'accept-ranges',
  'etag',
  'last-modified',
];
// Besides 2xx, the answers a Range or conditional request legitimately gets: the tool handles them.
const PASSED_STATUSES = new Set([304, 412, 416]);

function pick(headers: http.IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}

function extensionOf(url: URL): string {
  return /\.[A-Za-z0-9]{1,8}$/.exec(url.pathname)?.[0] ?? '';
}

/**
 * Runs `fn` with `http://127.0.0.1:<port>/<secret>/source[.ext]` standing in for `url`, then closes
 * the server, its sockets and every forwarded request when `fn` settles. The secret path keeps other
 * local processes from using the proxy while it is up.
 */
export async function withPinnedProxy<T>(
  url: string | URL,
  options: PinnedProxyOptions,
  fn: (localUrl: string) => Promise<T>,
): Promise<ProxyOutcome<T>> {
  const policy = toPolicy(options.allow);
  // Refuse a bad URL before any server or tool starts; every forwarded request checks again.
  const check = await checkUrl(url, {
    allow: policy,
    lookup: options.lookup,
    explainAllowList: options.explainAllowList,
  });
  if (!check.ok) return { ok: false, code: 'invalid_url', reason: check.reason };

  const sourcePath = `/${randomBytes(16).toString('hex')}/source${extensionOf(check.url)}`;
  const inflight = new Set<AbortController>();
  const target = check.url;
  // The first forwarded failure; a holder object because closures set it.
  const outcome: { failure: PinnedFailure | null; sizeBytes: number | null } = { failure: null, sizeBytes: null };
  const record = (next: PinnedFailure): void => {
    outcome.failure ??= next;
  };

  async function forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method === 'HEAD' ? 'HEAD' : 'GET';
    const abort = new AbortController();
    inflight.add(abort);
    res.on('close', () => {
      if (!res.writableFinished) abort.abort(new Error('the client closed the connection'));
    });
    try {
      const result = await pinnedRequest(target, {
        allow: policy,
        lookup: options.lookup,
        method,
        headers: { ...pick(req.headers, FORWARDED_REQUEST_HEADERS), 'accept-encoding': 'identity' },
        timeoutMs: options.timeoutMs,
        maxRedirects: options.maxRedirects,
        acceptStatus: (status) => (status >= 200 && status < 300) || PASSED_STATUSES.has(status),
        signal: abort.signal,
        connect: options.connect,
      });
      if (!result.ok) {
        record(result);
        res.writeHead(502, { 'content-type': 'text/plain' }).end(result.reason);
        return;
      }
      const upstream = result.response;
      // The largest size any answer announced: what the source says it is (checked against the limit).
      const size = announcedSize(upstream.statusCode ?? 0, upstream.headers);
      if (size !== null) outcome.sizeBytes = Math.max(outcome.sizeBytes ?? 0, size);
      res.writeHead(upstream.statusCode ?? 502, pick(upstream.headers, FORWARDED_RESPONSE_HEADERS));
      if (method === 'HEAD') {
        upstream.destroy();
        res.end();
        return;
      }
      await pipeline(upstream, res);
    } catch (error) {
      // A tool that stops reading (it seeks elsewhere) is normal; only the source's failures count.
      if (!abort.signal.aborted) record(failureFromError(error, options.timeoutMs));
      res.destroy();
    } finally {
      inflight.delete(abort);
    }
  }

  const server = http.createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== sourcePath) {
      res.writeHead(404).end();
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else {
      void forward(req, res);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  try {
    const value = await fn(`http://127.0.0.1:${port}${sourcePath}`);
    return outcome.failure ?? { ok: true, value, sizeBytes: outcome.sizeBytes };
  } catch (error) {
    if (outcome.failure) return outcome.failure;
    throw error;
  } finally {
    for (const controller of inflight) controller.abort(new Error('proxy closed'));
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}
