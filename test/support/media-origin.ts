// A loopback HTTP origin serving files with Range support, for source_url tests. Paths can be made to
// fail on demand (to act as a source host that breaks during download), or to trickle a download.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MediaOrigin {
  url(name: string): string;
  serve(name: string, path: string): void;
  /** From now on, this name answers with `status`. */
  failWith(name: string, status: number): void;
  /** From now on, every request for this name waits `ms` before it is answered (a slow source). */
  delay(name: string, ms: number): void;
  /**
   * From now on, a GET of this name without a Range (a worker's download) sends its headers, then one
   * byte every `everyMs`; ranged reads (the submit probe) are answered as usual.
   */
  trickle(name: string, everyMs: number): void;
  /** Trickled downloads of this name whose connection is still open. */
  trickling(name: string): number;
  requests: string[];
  close(): Promise<void>;
}

export async function startMediaOrigin(): Promise<MediaOrigin> {
  const files = new Map<string, string>();
  const failures = new Map<string, number>();
  const delays = new Map<string, number>();
  const trickles = new Map<string, number>();
  const trickling = new Map<string, number>();
  const requests: string[] = [];
  const trickle = async (name: string, path: string, everyMs: number, response: ServerResponse): Promise<void> => {
    const bytes = await readFile(path);
    response.writeHead(200, { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'content-length': bytes.length });
    trickling.set(name, (trickling.get(name) ?? 0) + 1);
    let sent = 0;
    const drip = setInterval(() => response.write(bytes.subarray(sent, ++sent)), everyMs);
    response.on('close', () => {
      clearInterval(drip);
      trickling.set(name, trickling.get(name)! - 1);
    });
  };
  const answer = (name: string, request: IncomingMessage, response: ServerResponse): void => {
    requests.push(`${request.method} ${name} ${request.headers.range ?? ''}`.trim());
    const failure = failures.get(name);
    const path = files.get(name);
    if (failure) return void response.writeHead(failure).end();
    if (!path) return void response.writeHead(404).end();
    void stat(path).then(({ size }) => {
      const match = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
      if (match) {
        const start = Number(match[1]);
        const end = match[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
        if (start >= size) return void response.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        response.writeHead(206, {
          'content-type': 'video/mp4',
          'accept-ranges': 'bytes',
          'content-length': end - start + 1,
          'content-range': `bytes ${start}-${end}/${size}`,
        });
        if (request.method === 'HEAD') return void response.end();
        return void createReadStream(path, { start, end }).pipe(response);
      }
      const everyMs = trickles.get(name);
      if (everyMs && request.method === 'GET') return void trickle(name, path, everyMs, response);
      response.writeHead(200, { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'content-length': size });
      if (request.method === 'HEAD') return void response.end();
      createReadStream(path).pipe(response);
    });
  };
  const server: Server = createServer((request, response) => {
    const name = (request.url ?? '/').slice(1);
    const wait = delays.get(name);
    if (wait) return void setTimeout(() => answer(name, request, response), wait);
    answer(name, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    serve: (name, path) => void files.set(name, path),
    failWith: (name, status) => void failures.set(name, status),
    delay: (name, ms) => void delays.set(name, ms),
    trickle: (name, everyMs) => void trickles.set(name, everyMs),
    trickling: (name) => trickling.get(name) ?? 0,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
