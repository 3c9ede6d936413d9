// Test origins on 127.0.0.1 only, and fake resolvers, for the src/common/net specs.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupFunction, ResolvedAddress } from '../../src/common/net/safe-url';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  remoteAddress: string | undefined;
  localAddress: string | undefined;
}

export interface LocalOrigin {
  port: number;
  /** `http://127.0.0.1:<port>` (or `http://[::1]:<port>`) */
  base: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export async function startOrigin(handler: Handler, host: '127.0.0.1' | '::1' = '127.0.0.1'): Promise<LocalOrigin> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      remoteAddress: req.socket.remoteAddress,
      localAddress: req.socket.localAddress,
    });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    base: host === '::1' ? `http://[::1]:${port}` : `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** Serves `body` with single-range support, as a CDN or object store would. */
export function serveBytes(body: Buffer, contentType = 'application/octet-stream'): Handler {
  return (req, res) => {
    const base = { 'content-type': contentType, 'accept-ranges': 'bytes', etag: '"v1"' };
    const match = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (!req.headers.range || !match || (match[1] === '' && match[2] === '')) {
      res.writeHead(200, { ...base, 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    let start: number;
    let end: number;
    if (match[1] === '') {
      start = Math.max(0, body.length - Number(match[2]));
      end = body.length - 1;
    } else {
      start = Number(match[1]);
      end = match[2] === '' ? body.length - 1 : Math.min(Number(match[2]), body.length - 1);
    }
    if (start >= body.length || start > end) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      return;
    }
    res.writeHead(206, {
      ...base,
      'content-length': end - start + 1,
      'content-range': `bytes ${start}-${end}/${body.length}`,
    });
    res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
  };
}

function family(address: string): number {
  return address.includes(':') ? 6 : 4;
}

/**
 * A resolver with fixed answers per name; a name mapped to several lists answers them in turn (the
 * last one repeats), which is how a rebinding attacker's DNS behaves. Unknown names fail ENOTFOUND.
 */
export function fakeLookup(table: Record<string, string[] | string[][]>): LookupFunction & { calls: string[] } {
  const calls: string[] = [];
  const counts = new Map<string, number>();
  const lookup = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const entry = table[hostname];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const answers = (Array.isArray(entry[0]) ? entry : [entry]) as string[][];
    const n = counts.get(hostname) ?? 0;
    counts.set(hostname, n + 1);
    return answers[Math.min(n, answers.length - 1)].map((address) => ({ address, family: family(address) }));
  };
  return Object.assign(lookup, { calls });
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function readBody(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}
