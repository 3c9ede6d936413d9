// Every connection in this file goes to 127.0.0.1. Non-loopback addresses appear only where the code
// must refuse them before connecting, or where the connect function is a stub that records the
// pinned target and then connects to the local origin instead.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { promisify } from 'node:util';
import {
  type ConnectFunction,
  defaultConnect,
  type PinnedConnectOptions,
} from '../../src/common/net/pinned-connection';
import { downloadToFile, pinnedRequest } from '../../src/common/net/pinned-fetch';
import { closedPort, fakeLookup, type LocalOrigin, readBody, startOrigin } from './local-origin';

/** Wraps the real connect and records what each connection was pinned to. */
function spyConnect(impl: ConnectFunction = defaultConnect): ConnectFunction & { seen: PinnedConnectOptions[] } {
  const seen: PinnedConnectOptions[] = [];
  const connect = (options: PinnedConnectOptions): net.Socket => {
    seen.push(options);
    return impl(options);
  };
  return Object.assign(connect, { seen });
}

function lookupVia(options: PinnedConnectOptions, host: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    options.lookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

describe('pinnedRequest', () => {
  let origin: LocalOrigin;
  let second: LocalOrigin;

  beforeAll(async () => {
    origin = await startOrigin((req, res) => {
      const path = req.url ?? '/';
      if (path === '/ok') res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      else if (path === '/to-private') res.writeHead(302, { location: 'http://10.0.0.5/a.mp4' }).end();
      else if (path === '/to-evil-name') res.writeHead(302, { location: 'http://evil.test/a.mp4' }).end();
      else if (path === '/to-metadata')
        res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      else if (path === '/relative') res.writeHead(302, { location: '/ok' }).end();
      else if (path === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else if (path === '/to-second') res.writeHead(302, { location: `${second.base}/echo` }).end();
      else if (path === '/echo') res.writeHead(200).end(JSON.stringify(req.headers));
      else if (path.startsWith('/status/')) res.writeHead(Number(path.slice(8))).end('nope');
      else if (path === '/hang')
        return; // never answers
      else res.writeHead(404).end();
    });
    second = await startOrigin((req, res) => res.writeHead(200).end(JSON.stringify(req.headers)));
  });
  afterAll(async () => {
    await origin.close();
    await second.close();
  });
  beforeEach(() => {
    origin.requests.length = 0;
    second.requests.length = 0;
  });

  it('fetches from an allowed local origin through the checked address', async () => {
    const result = await pinnedRequest(`${origin.base}/ok`, { allow: ['127.0.0.1'], timeoutMs: 2000 });
    if (!result.ok) throw new Error(result.reason);
    expect(result.response.statusCode).toBe(200);
    expect(result.address).toBe('127.0.0.1');
    expect((await readBody(result.response)).toString()).toBe('hello');
  });

  it('reaches an IPv6 loopback literal when ::1 is allowed, with a bracketed Host header', async () => {
    const v6 = await startOrigin((req, res) => res.writeHead(200).end(req.headers.host), '::1');
    try {
      const url = `http://[::1]:${v6.port}/`;
      await expect(pinnedRequest(url, { allow: ['127.0.0.1'], timeoutMs: 2000 })).resolves.toMatchObject({
        ok: false,
        code: 'invalid_url',
      });
      const result = await pinnedRequest(url, { allow: ['::1'], timeoutMs: 2000 });
      if (!result.ok) throw new Error(result.reason);
      expect((await readBody(result.response)).toString()).toBe(`[::1]:${v6.port}`);
      expect(v6.requests).toHaveLength(1);
    } finally {
      await v6.close();
    }
  });

  it('refuses the loopback origin when it is not allowed, without connecting', async () => {
    const connect = spyConnect();
    const result = await pinnedRequest(`${origin.base}/ok`, { allow: [], timeoutMs: 2000, connect });
    expect(result).toMatchObject({ ok: false, code: 'invalid_url' });
    expect(connect.seen).toHaveLength(0);
    expect(origin.requests).toHaveLength(0);
  });

  it('DNS rebinding: connects to the address it checked, never to a later answer', async () => {
    // First answer allowed (loopback), every later answer private: a rebinding DNS server.
    const lookup = fakeLookup({ 'rebind.test': [['127.0.0.1'], ['10.0.0.5']] });
    const connect = spyConnect();
    const result = await pinnedRequest(`http://rebind.test:${origin.port}/ok`, {
      allow: ['127.0.0.1'],
      lookup,
      timeoutMs: 2000,
      connect,
    });
    if (!result.ok) throw new Error(result.reason);
    expect((await readBody(result.response)).toString()).toBe('hello');
    expect(lookup.calls).toEqual(['rebind.test']); // resolved once, for the check
    expect(connect.seen).toHaveLength(1);
    expect(connect.seen[0]).toMatchObject({ host: 'rebind.test', address: '127.0.0.1', tls: false });
    await expect(lookupVia(connect.seen[0], 'rebind.test')).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    // The origin got the request, with the URL's host name in Host.
    expect(origin.requests).toHaveLength(1);
    expect(origin.requests[0].headers.host).toBe(`rebind.test:${origin.port}`);
    expect(origin.requests[0].localAddress).toMatch(/127\.0\.0\.1$/);
  });

  it('DNS rebinding the other way: a checked public address stays the target even when DNS later says loopback', async () => {
    const lookup = fakeLookup({ 'rebind.test': [['93.184.216.34'], ['127.0.0.1']] });
    // Stub connection layer: records the pinned target, then talks to the local origin instead, so
    // nothing ever leaves this machine.
    const connect = spyConnect(() => net.connect({ host: '127.0.0.1', port: origin.port }));
    const result = await pinnedRequest('http://rebind.test/ok', { allow: [], lookup, timeoutMs: 2000, connect });
    if (!result.ok) throw new Error(result.reason);
    result.response.resume();
    expect(result.address).toBe('93.184.216.34');
    expect(lookup.calls).toEqual(['rebind.test']);
    expect(connect.seen[0]).toMatchObject({ host: 'rebind.test', port: 80, address: '93.184.216.34' });
    await expect(lookupVia(connect.seen[0], 'rebind.test')).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
    await expect(lookupVia(connect.seen[0], 'other.test')).rejects.toThrow(/unexpected host/);
  });

  it.each([
    ['/to-private', 'http://10.0.0.5/'],
    ['/to-evil-name', 'a name resolving to 10.0.0.5'],
    ['/to-metadata', 'the metadata address'],
  ])('refuses the redirect %s (to %s) without connecting to it', async (path) => {
    const lookup = fakeLookup({ 'evil.test': ['10.0.0.5'] });
    const connect = spyConnect();
    const started = Date.now();
    const result = await pinnedRequest(`${origin.base}${path}`, {
      allow: ['127.0.0.1'],
      lookup,
      timeoutMs: 5000,
      connect,
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({ ok: false, code: 'invalid_url', reason: expect.stringMatching(/private/) });
    // One connection only: the first hop, to the local origin.
    expect(connect.seen.map((options) => options.address)).toEqual(['127.0.0.1']);
  });

  it('follows a relative redirect, checking the new hop again', async () => {
    const lookup = fakeLookup({ 'media.test': ['127.0.0.1'] });
    const result = await pinnedRequest(`http://media.test:${origin.port}/relative`, {
      allow: ['127.0.0.1'],
      lookup,
      timeoutMs: 2000,
    });
    if (!result.ok) throw new Error(result.reason);
    expect((await readBody(result.response)).toString()).toBe('hello');
    expect(result.url.pathname).toBe('/ok');
    expect(origin.requests.map((request) => request.url)).toEqual(['/relative', '/ok']);
    expect(lookup.calls).toEqual(['media.test', 'media.test']);
  });

  it('stops after maxRedirects', async () => {
    const result = await pinnedRequest(`${origin.base}/loop`, {
      allow: ['127.0.0.1'],
      timeoutMs: 2000,
      maxRedirects: 2,
    });
    expect(result).toMatchObject({
      ok: false,
      code: 'invalid_url',
      reason: expect.stringMatching(/redirected more than 2/),
    });
    expect(origin.requests).toHaveLength(3);
  });

  it('drops credentials on a cross-origin redirect but keeps other headers', async () => {
    const result = await pinnedRequest(`${origin.base}/to-second`, {
      allow: ['127.0.0.1'],
      timeoutMs: 2000,
      headers: { Authorization: 'Bearer secret', Range: 'bytes=0-9' },
    });
    if (!result.ok) throw new Error(result.reason);
    const headers = JSON.parse((await readBody(result.response)).toString()) as Record<string, string>;
    expect(headers.authorization).toBeUndefined();
    expect(headers.range).toBe('bytes=0-9');
    expect(origin.requests[0].headers.authorization).toBe('Bearer secret');
  });

  it.each([403, 404, 410])('maps a source %i to invalid_url ("unreachable or signature expired")', async (status) => {
    const result = await pinnedRequest(`${origin.base}/status/${status}`, { allow: ['127.0.0.1'], timeoutMs: 2000 });
    expect(result).toMatchObject({
      ok: false,
      code: 'invalid_url',
      status,
      reason: expect.stringMatching(/signature expired/),
    });
  });

  it.each([500, 502, 503, 429])('maps a source %i to upstream_error', async (status) => {
    const result = await pinnedRequest(`${origin.base}/status/${status}`, { allow: ['127.0.0.1'], timeoutMs: 2000 });
    expect(result).toMatchObject({ ok: false, code: 'upstream_error', status });
  });

  it('times out a source that never answers with upstream_error', async () => {
    const started = Date.now();
    const result = await pinnedRequest(`${origin.base}/hang`, { allow: ['127.0.0.1'], timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, code: 'upstream_error', reason: expect.stringMatching(/300 ms/) });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('maps a refused connection to invalid_url (unreachable)', async () => {
    const port = await closedPort();
    const result = await pinnedRequest(`http://127.0.0.1:${port}/`, { allow: ['127.0.0.1'], timeoutMs: 2000 });
    expect(result).toMatchObject({ ok: false, code: 'invalid_url', reason: expect.stringMatching(/unreachable/) });
  });

  it('tries the next checked address when one refuses the connection', async () => {
    const port = await closedPort();
    const lookup = fakeLookup({ 'two.test': ['127.0.0.2', '127.0.0.1'] });
    const connect = spyConnect((options) =>
      net.connect({ host: options.address, port: options.address === '127.0.0.2' ? port : origin.port }),
    );
    const result = await pinnedRequest('http://two.test/ok', {
      allow: ['127.0.0.0/8'],
      lookup,
      timeoutMs: 2000,
      connect,
    });
    if (!result.ok) throw new Error(result.reason);
    result.response.resume();
    expect(result.address).toBe('127.0.0.1');
    expect(connect.seen.map((options) => options.address)).toEqual(['127.0.0.2', '127.0.0.1']);
  });

  it('rethrows when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = pinnedRequest(`${origin.base}/hang`, {
      allow: ['127.0.0.1'],
      timeoutMs: 5000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('cancelled by test')), 50);
    await expect(pending).rejects.toThrow('cancelled by test');
  });
});

describe('pinnedRequest over TLS', () => {
  let dir: string;
  let server: tls.Server;
  let port: number;
  const servernames: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-net-tls-'));
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=media.test',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    const context = { key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')) };
    server = tls.createServer({
      ...context,
      SNICallback: (servername, callback) => {
        servernames.push(servername);
        callback(null, tls.createSecureContext(context));
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('sends the URL host name as SNI to the pinned address, and an untrusted certificate is invalid_url', async () => {
    const lookup = fakeLookup({ 'media.test': [['127.0.0.1'], ['10.0.0.5']] });
    const connect = spyConnect();
    const result = await pinnedRequest(`https://media.test:${port}/a.mp4`, {
      allow: ['127.0.0.1'],
      lookup,
      timeoutMs: 2000,
      connect,
    });
    expect(servernames).toEqual(['media.test']);
    expect(connect.seen[0]).toMatchObject({ tls: true, servername: 'media.test', address: '127.0.0.1' });
    expect(result).toMatchObject({ ok: false, code: 'invalid_url', reason: expect.stringMatching(/certificate/) });
  });
});

describe('downloadToFile', () => {
  const body = randomBytes(200_000);
  let origin: LocalOrigin;
  let dir: string;
  /** When each trickled response's connection closed. */
  const trickleClosed: number[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-net-dl-'));
    origin = await startOrigin((req, res) => {
      switch (req.url) {
        case '/trickle': {
          // One byte every 50 ms: never silent long enough for the idle timeout, never done.
          res.writeHead(200, { 'content-length': body.length });
          const drip = setInterval(() => res.write(body.subarray(0, 1)), 50);
          res.on('close', () => {
            clearInterval(drip);
            trickleClosed.push(Date.now());
          });
          return;
        }
        case '/file':
          res.writeHead(200, { 'content-length': body.length }).end(body);
          return;
        case '/chunked':
          // No Content-Length: the limit must be enforced while streaming.
          res.writeHead(200);
          for (let offset = 0; offset < body.length; offset += 16_384)
            res.write(body.subarray(offset, offset + 16_384));
          res.end();
          return;
        case '/drop':
          res.writeHead(200, { 'content-length': body.length });
          res.write(body.subarray(0, 50_000), () => setTimeout(() => res.socket?.destroy(), 20));
          return;
        case '/stall':
          res.writeHead(200, { 'content-length': body.length });
          res.write(body.subarray(0, 1000));
          return;
        case '/404':
          res.writeHead(404).end();
          return;
        case '/503':
          res.writeHead(503).end();
          return;
        default:
          res.writeHead(500).end();
      }
    });
  });
  afterAll(async () => {
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  });

  const options = { allow: ['127.0.0.1'], timeoutMs: 2000, totalMs: 10_000 };

  it('streams the body to the file with its size and SHA-256', async () => {
    const dest = join(dir, 'ok.bin');
    const result = await downloadToFile(`${origin.base}/file`, dest, { ...options, maxBytes: body.length });
    expect(result).toEqual({
      ok: true,
      sizeBytes: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
    expect((await readFile(dest)).equals(body)).toBe(true);
  });

  it('refuses an announced body over the limit with file_too_large, keeping nothing', async () => {
    const dest = join(dir, 'announced.bin');
    const result = await downloadToFile(`${origin.base}/file`, dest, { ...options, maxBytes: body.length - 1 });
    expect(result).toMatchObject({ ok: false, code: 'file_too_large' });
    expect(existsSync(dest)).toBe(false);
  });

  it('stops a chunked body at the limit with file_too_large and deletes the partial file', async () => {
    const dest = join(dir, 'chunked.bin');
    const result = await downloadToFile(`${origin.base}/chunked`, dest, { ...options, maxBytes: 100_000 });
    expect(result).toMatchObject({ ok: false, code: 'file_too_large' });
    expect(existsSync(dest)).toBe(false);
  });

  it('maps a source that drops the connection mid-body to upstream_error and deletes the partial file', async () => {
    const dest = join(dir, 'drop.bin');
    const result = await downloadToFile(`${origin.base}/drop`, dest, { ...options, maxBytes: body.length });
    expect(result).toMatchObject({ ok: false, code: 'upstream_error' });
    expect(existsSync(dest)).toBe(false);
  });

  it('maps a source that stalls mid-body to upstream_error (idle timeout)', async () => {
    const dest = join(dir, 'stall.bin');
    const result = await downloadToFile(`${origin.base}/stall`, dest, {
      ...options,
      timeoutMs: 300,
      maxBytes: body.length,
    });
    expect(result).toMatchObject({ ok: false, code: 'upstream_error', reason: expect.stringMatching(/300 ms/) });
    expect(existsSync(dest)).toBe(false);
  });

  it('stops a body that keeps trickling at the whole download bound as timeout, deleting the partial file', async () => {
    const dest = join(dir, 'trickle-bound.bin');
    const started = Date.now();
    const result = await downloadToFile(`${origin.base}/trickle`, dest, {
      ...options,
      totalMs: 600,
      maxBytes: body.length,
    });
    expect(result).toMatchObject({ ok: false, code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(existsSync(dest)).toBe(false);
  });

  it('stops a body slower than the minimum rate as upstream_error, naming the rate', async () => {
    const dest = join(dir, 'trickle-rate.bin');
    const started = Date.now();
    const result = await downloadToFile(`${origin.base}/trickle`, dest, {
      ...options,
      minRate: { bytesPerSecond: 1000, windowMs: 300 },
      maxBytes: body.length,
    });
    expect(result).toMatchObject({
      ok: false,
      code: 'upstream_error',
      reason: expect.stringMatching(/1000 bytes a second/),
    });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(existsSync(dest)).toBe(false);
  });

  it("a caller's abort mid-body throws its reason and closes the source's connection at once", async () => {
    const dest = join(dir, 'trickle-abort.bin');
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    const download = downloadToFile(`${origin.base}/trickle`, dest, {
      ...options,
      maxBytes: body.length,
      signal: controller.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closedBefore = trickleClosed.length;
    const aborted = Date.now();
    controller.abort(reason);
    await expect(download).rejects.toBe(reason);
    const closedAt = await new Promise<number>((resolve) => {
      const poll = setInterval(() => {
        if (trickleClosed.length > closedBefore) resolve((clearInterval(poll), trickleClosed[closedBefore]));
      }, 10);
    });
    expect(closedAt - aborted).toBeLessThan(1000);
    expect(existsSync(dest)).toBe(false);
  });

  it('maps 404 to invalid_url and 503 to upstream_error, creating no file', async () => {
    const dest = join(dir, 'status.bin');
    await expect(downloadToFile(`${origin.base}/404`, dest, { ...options, maxBytes: 10 })).resolves.toMatchObject({
      ok: false,
      code: 'invalid_url',
    });
    await expect(downloadToFile(`${origin.base}/503`, dest, { ...options, maxBytes: 10 })).resolves.toMatchObject({
      ok: false,
      code: 'upstream_error',
    });
    expect(existsSync(dest)).toBe(false);
  });

  it('surfaces a local disk error as an exception, not as a source failure', async () => {
    await expect(
      downloadToFile(`${origin.base}/file`, join(dir, 'missing-dir', 'x.bin'), { ...options, maxBytes: body.length }),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a private source before connecting, creating no file', async () => {
    const dest = join(dir, 'private.bin');
    const connect = spyConnect();
    const result = await downloadToFile('http://10.0.0.5/a.mp4', dest, { ...options, maxBytes: 10, connect });
    expect(result).toMatchObject({ ok: false, code: 'invalid_url' });
    expect(connect.seen).toHaveLength(0);
    expect(existsSync(dest)).toBe(false);
  });
});
