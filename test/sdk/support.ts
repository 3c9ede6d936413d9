// Helpers for running the official client (sdk/) against the real service: a private build of the SDK,
// and an HTTP proxy that records every exchange and can lose one response on the way back.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export type Sdk = typeof import('../../sdk/src/index.js');

export const ROOT = resolve(__dirname, '../..');

/**
 * Compiles sdk/src with the SDK's own tsconfig into a fresh directory and returns it. A private
 * output, not sdk/dist: `npm test -w sdk` deletes and rebuilds sdk/dist, and must not pull the
 * client out from under a run of this suite. Type errors do not stop tsc from emitting (they are
 * the SDK's own `npm test` to report); a build that emitted nothing is an error.
 */
export function buildSdk(): string {
  const outDir = mkdtempSync(join(tmpdir(), 'mj-sdk-build-'));
  const build = spawnSync(
    join(ROOT, 'node_modules/.bin/tsc'),
    ['-p', join(ROOT, 'sdk/tsconfig.json'), '--outDir', outDir, '--declaration', 'false', '--sourceMap', 'false'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (!existsSync(join(outDir, 'index.js')) || !existsSync(join(outDir, 'cli.js'))) {
    throw new Error(`building the SDK emitted nothing:\n${build.stdout}${build.stderr}`);
  }
  return outDir;
}

/** Loads the built SDK with Node's own loader, as a customer's program would. */
export function loadSdk(outDir: string): Sdk {
  return createRequire(__filename)(join(outDir, 'index.js')) as Sdk;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a child process (asynchronously: the API and worker share this process). */
export function runCli(cliPath: string, args: string[], env: Record<string, string>, cwd: string): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MEDIAJOBS_')));
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

export interface Exchange {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  status: number | null;
  responseHeaders: IncomingHttpHeaders | null;
  /** The upstream answered, but the proxy cut the client's connection instead of passing it on. */
  dropped: boolean;
}

/**
 * An HTTP proxy in front of the API. It records each exchange (request headers, upstream status and
 * headers) and, when told to, lets a request reach the API and then drops the connection before the
 * answer gets back: for the client, a network failure after the server has done the work.
 */
export class RecordingProxy {
  readonly exchanges: Exchange[] = [];
  target = '';
  private dropNext: ((exchange: Exchange) => boolean) | null = null;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<RecordingProxy> {
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const proxy = new RecordingProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.forward(req, res));
    return proxy;
  }

  /** The next request matching `predicate` reaches the API, but its response is lost. */
  dropResponseOnce(predicate: (exchange: Exchange) => boolean): void {
    this.dropNext = predicate;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const exchange: Exchange = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      status: null,
      responseHeaders: null,
      dropped: false,
    };
    this.exchanges.push(exchange);
    const drop = this.dropNext?.(exchange) ?? false;
    if (drop) this.dropNext = null;
    const upstream = httpRequest(
      new URL(exchange.path, this.target),
      { method: exchange.method, headers: req.headers },
      (answer) => {
        exchange.status = answer.statusCode ?? null;
        exchange.responseHeaders = answer.headers;
        if (drop) {
          exchange.dropped = true;
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}
