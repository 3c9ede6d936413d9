// One hop of a request to a user-supplied URL: a socket whose DNS lookup answers only the address that
// was checked (so a name cannot be re-resolved between the check and the connect), the request on it,
// and what its errors and statuses mean for the client (invalid_url or upstream_error). Following a URL,
// redirects and downloads are pinned-fetch.ts.
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { bareHostname } from './safe-url';

export type PinnedFailureCode = 'invalid_url' | 'upstream_error';

export interface PinnedFailure {
  ok: false;
  code: PinnedFailureCode;
  /** Client-safe wording: never names resolved addresses or internal hosts. */
  reason: string;
  /** The HTTP status the source answered, when the failure is one. */
  status?: number;
}

/** What a connection is opened with; `lookup` answers only `address` and is what net/tls use. */
export interface PinnedConnectOptions {
  tls: boolean;
  host: string;
  port: number;
  address: string;
  family: 4 | 6;
  /** TLS SNI and certificate name: the URL's host name (absent for IP literals). */
  servername?: string;
  lookup: net.LookupFunction;
}

export type ConnectFunction = (options: PinnedConnectOptions) => net.Socket;

export const defaultConnect: ConnectFunction = (options) =>
  options.tls
    ? tls.connect({ host: options.host, port: options.port, servername: options.servername, lookup: options.lookup })
    : net.connect({ host: options.host, port: options.port, lookup: options.lookup });

export class PinnedTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

// Errors that mean nothing answered at that address: worth trying the next checked address.
export const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

export function fail(code: PinnedFailureCode, reason: string, status?: number): PinnedFailure {
  return status === undefined ? { ok: false, code, reason } : { ok: false, code, reason, status };
}

export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/** Maps a socket/HTTP error to the catalogue: nothing to connect to or a bad certificate is the URL's fault. */
export function failureFromError(error: unknown, timeoutMs: number): PinnedFailure {
  if (error instanceof PinnedTimeoutError) {
    return fail('upstream_error', `The URL's server did not answer within ${timeoutMs} ms.`);
  }
  const code = errorCode(error);
  if (CONNECT_ERRORS.has(code)) return fail('invalid_url', `The URL is unreachable: the connection failed (${code}).`);
  if (/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) {
    return fail('invalid_url', `The URL's TLS certificate could not be verified (${code}).`);
  }
  return fail('upstream_error', `The connection to the URL's server failed (${code}).`);
}

export function failureFromStatus(status: number): PinnedFailure {
  if (status >= 500 || status === 408 || status === 429) {
    return fail('upstream_error', `The URL's server failed (HTTP ${status}).`, status);
  }
  if (status >= 400)
    return fail('invalid_url', `The URL answered HTTP ${status}: it is unreachable or its signature expired.`, status);
  return fail('invalid_url', `The URL answered an unexpected HTTP ${status}.`, status);
}

function pinnedLookup(host: string, address: string, family: 4 | 6): net.LookupFunction {
  // Node calls lookup with `all: true` when autoSelectFamily is on (the default since Node 20).
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (hostname !== host) {
      callback(Object.assign(new Error(`pinned lookup asked for an unexpected host`), { code: 'ENOTFOUND' }));
    } else if (options.all) {
      callback(null, [{ address, family }]);
    } else {
      callback(null, address, family);
    }
  }) as net.LookupFunction;
}

/** One request on its own socket, pinned to `address`. */
export interface Hop {
  url: URL;
  address: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  timeoutMs: number;
  signal: AbortSignal;
  connect: ConnectFunction;
}

export function requestOnce(hop: Hop): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const secure = hop.url.protocol === 'https:';
    const host = bareHostname(hop.url);
    const family = net.isIP(hop.address) === 6 ? 6 : 4;
    const connectOptions: PinnedConnectOptions = {
      tls: secure,
      host,
      port: Number(hop.url.port) || (secure ? 443 : 80),
      address: hop.address,
      family,
      servername: net.isIP(host) === 0 ? host : undefined,
      lookup: pinnedLookup(host, hop.address, family),
    };
    let response: http.IncomingMessage | undefined;
    // No agent: with `createConnection` and no agent every request gets its own pinned socket, so a
    // pooled socket to some other address can never be reused.
    const request = (secure ? https : http).request({
      protocol: hop.url.protocol,
      hostname: host,
      port: connectOptions.port,
      path: `${hop.url.pathname}${hop.url.search}`,
      method: hop.method,
      headers: hop.headers,
      signal: hop.signal,
      createConnection: () => hop.connect(connectOptions),
    });
    request.setTimeout(hop.timeoutMs, () => {
      const error = new PinnedTimeoutError('socket idle timeout');
      if (response) response.destroy(error);
      else request.destroy(error);
    });
    request.on('error', (error) => {
      if (!response) reject(error);
    });
    request.once('response', (res) => {
      response = res;
      resolve(res);
    });
    request.end(hop.body);
  });
}
