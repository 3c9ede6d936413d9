// Operations (issue 2, docs/api-decisions.md §8): health, Prometheus metrics, request ids on every response, logs
// that never carry secrets (captured from the built API run as a real process), and unexpected
// exceptions that reach the client as a bare internal_error.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import { ApiKeysRepository } from '../../src/auth/api-keys.repository';
import { CATALOGUE } from '../../src/common/errors/catalogue';
import { REDACTING_FORMATTERS } from '../../src/common/logger';
import { sendError } from '../../src/common/http/error-response';
import { RouteTable } from '../../src/common/http/route-table';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { ensureBuilt, ROOT } from '../support/dist-build';
import { expectError, waitUntil } from '../support/error-checks';

/** The value of one series of a counter in Prometheus text format (0 when absent). */
function counterValue(metrics: string, name: string, labels: Record<string, string>): number {
  for (const line of metrics.split('\n')) {
    const match = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...match[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return 0;
}

describe('health, metrics and request ids', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('GET /health/live → 200 {status: ok}', async () => {
    const response = await call(api, 'GET', '/health/live');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('GET /health/ready → 200 with a check per dependency', async () => {
    const response = await call(api, 'GET', '/health/ready');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', checks: { postgres: 'up', redis: 'up' } });
  });

  it('health, metrics and docs need no key and are never rate limited', async () => {
    const strict = await startApi({ IP_RATE_LIMIT: '1' });
    try {
      const statuses = await Promise.all(Array.from({ length: 6 }, () => call(strict, 'GET', '/health/live')));
      expect(statuses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect((await call(strict, 'GET', '/metrics')).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('every response carries its own X-Request-Id (req_…): health, metrics, docs, API, errors', async () => {
    const account = await createAccount(api);
    const paths: [string, string, string | undefined][] = [
      ['GET', '/health/live', undefined],
      ['GET', '/health/ready', undefined],
      ['GET', '/metrics', undefined],
      ['GET', '/docs/openapi.json', undefined],
      ['GET', '/docs/errors.html', undefined],
      ['GET', '/docs', undefined],
      ['GET', '/v1/account/credits', account.apiKey],
      ['GET', '/v1/account/credits', undefined],
      ['GET', '/v1/nope', undefined],
    ];
    const ids: string[] = [];
    for (const [method, path, key] of paths) {
      const response = await call(api, method, path, { key });
      expect([path, response.status < 500]).toEqual([path, true]);
      const id = response.headers.get('x-request-id');
      expect([path, id]).toEqual([path, expect.stringMatching(/^req_[0-9A-Za-z]+$/)]);
      if (response.status >= 400) expect(response.body.error.request_id).toBe(id);
      ids.push(id!);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a request id sent by the client is not echoed back (ids are ours)', async () => {
    const response = await call(api, 'GET', '/health/live', { headers: { 'x-request-id': 'req_forged' } });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-request-id')).not.toBe('req_forged');
  });

  it('/metrics counts requests by route pattern, status and error code', async () => {
    const account = await createAccount(api);
    const before = (await call(api, 'GET', '/metrics')).body as string;
    await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    await call(api, 'GET', '/v1/account/credits');
    await call(api, 'GET', '/v1/definitely-not-a-route');
    await call(api, 'DELETE', `/v1/account/api-keys/key_doesnotexist0000000`, { key: account.apiKey });

    const response = await call(api, 'GET', '/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const after = response.body as string;
    expect(after).toContain('# TYPE mediajobs_http_requests_total counter');
    expect(after).toContain('# TYPE mediajobs_http_request_duration_seconds histogram');

    const delta = (labels: Record<string, string>) =>
      counterValue(after, 'mediajobs_http_requests_total', labels) -
      counterValue(before, 'mediajobs_http_requests_total', labels);
    expect(delta({ method: 'GET', route: '/v1/account/credits', status: '200', code: '' })).toBe(2);
    expect(delta({ method: 'GET', route: '/v1/account/credits', status: '401', code: 'missing_api_key' })).toBe(1);
    expect(delta({ method: 'GET', status: '404', code: 'route_not_found' })).toBe(1);
    // Route patterns, never raw URLs (ids would explode the number of series).
    expect(
      delta({ method: 'DELETE', route: '/v1/account/api-keys/:id', status: '404', code: 'resource_missing' }),
    ).toBe(1);
    expect(after).not.toContain('key_doesnotexist0000000');
    expect(after).not.toContain('definitely-not-a-route');
    expect(after).toMatch(
      /mediajobs_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/account\/credits"[^}]*\} \d+/,
    );
  });
});

describe('logs (the built API, run as a process, its output captured)', () => {
  let child: ChildProcessWithoutNullStreams;
  let stdout = '';
  let stderr = '';
  let base = '';
  const adminToken = 'ops-test-admin-token-7f3c9a1e5b';

  async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (!address || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  beforeAll(async () => {
    const main = ensureBuilt('dist/src/main.js');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [main], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ADMIN_TOKEN: adminToken,
        IP_RATE_LIMIT: '1000',
      },
    });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitUntil(async () => stdout.includes('listening on') || child.exitCode !== null, 30_000, 50);
    if (child.exitCode !== null) throw new Error(`API exited: ${stderr}`);
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  interface Sent {
    status: number;
    id: string;
    body: any;
  }
  const sent: Sent[] = [];
  const secrets: Record<string, string> = {};

  async function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Sent> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const result = {
      status: response.status,
      id: response.headers.get('x-request-id') ?? '',
      body: await response.json(),
    };
    sent.push(result);
    return result;
  }

  /** Requests carrying every kind of secret the service knows, made once for the tests below. */
  beforeAll(async () => {
    const created = await send(
      'POST',
      '/v1/admin/accounts',
      { 'x-admin-token': adminToken },
      { name: 'log test', plan: 'pro' },
    );
    const realKey: string = created.body.api_key.key;
    Object.assign(secrets, {
      realKey,
      realKeyBody: realKey.slice('mjk_'.length),
      unknownKey: `mjk_${'Q7'.repeat(20)}`,
      adminToken,
      licenseToken: 'eyJhbGciOiJFZERTQSJ9.license-token-secret.sig',
      bearer: 'bearer-secret-5d1e0c',
      cookie: 'cookie-secret-9a8b7c',
    });
    await send('GET', '/v1/account/credits', { 'x-api-key': realKey });
    await send('GET', '/v1/account/credits', { 'x-api-key': secrets.unknownKey });
    await send('GET', '/v1/account/credits?expand=everything', {
      'x-api-key': realKey,
      'x-license-token': secrets.licenseToken,
      authorization: `Bearer ${secrets.bearer}`,
      cookie: `session=${secrets.cookie}`,
    });
    await send('GET', '/v1/admin/accounts', { 'x-admin-token': `${adminToken}-wrong` });
    const createdKey = await send('POST', '/v1/account/api-keys', { 'x-api-key': realKey }, { scopes: ['audio'] });
    secrets.newKey = createdKey.body.key;
    secrets.newKeyBody = String(createdKey.body.key).slice('mjk_'.length);
    // Credentials put in the query string by mistake, under every name (and spelling) the service accepts
    // for one in a header, the query or a body: none may be logged with the URL.
    const inQuery: Record<string, string> = {
      'X-Admin-Token': 'query-admin-token-3f9a1c',
      'x-api-key': 'query-api-key-77d0e2',
      admin_token: 'query-admin-token-b81f40',
      license_key: 'mjl_query-license-key-5c2e',
      password: 'query-password-e4a917',
      New_Password: 'query-new-password-20c6',
      'X-License-Token': 'query-license-token-9d3b',
      'x-csrf-token': 'query-csrf-token-61fa',
      mj_session: 'query-session-cookie-0b7e',
      signature: 'query-asset-signature-a5d8',
    };
    for (const [name, value] of Object.entries(inQuery)) secrets[`query ${name}`] = value;
    const query = Object.entries(inQuery)
      .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
      .join('&');
    await send('GET', `/v1/account/credits?${query}`, { 'x-api-key': realKey });
    await send('GET', `/v1/no-such-route?${query}`, {});
  });

  it('the requests were answered as expected (so the lines below are about real traffic)', () => {
    expect(sent.map((request) => request.status)).toEqual([201, 200, 401, 200, 401, 201, 200, 404]);
    for (const request of sent) expect(request.id).toMatch(/^req_/);
  });

  it('every request is logged as one JSON line with its request id, method, path and status', async () => {
    await waitUntil(async () => sent.every((request) => stdout.includes(request.id)), 3000, 50).catch(() => 0);
    const entries = stdout
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line));
    for (const request of sent) {
      const entry = entries.find((candidate) => candidate.req?.id === request.id);
      expect([request.id, entry === undefined]).toEqual([request.id, false]);
      expect(entry.res.statusCode).toBe(request.status);
      expect(entry.req.method).toMatch(/^(GET|POST)$/);
      expect(entry.req.url).toMatch(/^\/v1\//);
    }
  });

  it('no key, operator or licence token, authorization or cookie appears in any log line', () => {
    const lines = (stdout + stderr).split('\n').filter((line) => line.trim());
    // The process did log (start-up lines at least), so the check below reads real output.
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of Object.values(secrets)) expect(secret.length).toBeGreaterThan(8);
    const logged = Object.entries(secrets).filter(([, secret]) => lines.some((line) => line.includes(secret)));
    expect(logged.map(([name]) => name)).toEqual([]);
  });
});

describe('the redaction configuration of the logger', () => {
  it('a request logged with its headers and body shows [redacted] for every credential, in any spelling', () => {
    const lines: string[] = [];
    const logger = pino({ formatters: REDACTING_FORMATTERS }, { write: (line: string) => lines.push(line) });
    logger.info({
      req: {
        id: 'req_x',
        headers: {
          'x-api-key': 'mjk_secretsecretsecretsecretsecretsecret',
          'X-Admin-Token': 'admin-secret-token',
          'x-license-token': 'license-secret-token',
          'x-csrf-token': 'csrf-secret-token',
          authorization: 'Bearer bearer-secret',
          cookie: 'session=cookie-secret',
          'user-agent': 'curl/8',
        },
        body: {
          email: 'a@example.com',
          password: 'password-secret',
          license_key: 'mjl_secret',
          newPassword: 'x-secret',
        },
      },
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/secret/);
    const { req } = JSON.parse(lines[0]);
    expect(req.headers).toEqual({
      'x-api-key': '[redacted]',
      'X-Admin-Token': '[redacted]',
      'x-license-token': '[redacted]',
      'x-csrf-token': '[redacted]',
      authorization: '[redacted]',
      cookie: '[redacted]',
      'user-agent': 'curl/8',
    });
    expect(req.body).toEqual({
      email: 'a@example.com',
      password: '[redacted]',
      license_key: '[redacted]',
      newPassword: '[redacted]',
    });
  });
});

describe('an unexpected exception reaches the client as a bare internal_error', () => {
  function respond(exception: unknown) {
    const sent: { status?: number; headers: Record<string, string>; body?: any } = { headers: {} };
    const reply = {
      header(name: string, value: string) {
        sent.headers[name.toLowerCase()] = String(value);
        return reply;
      },
      status(code: number) {
        sent.status = code;
        return reply;
      },
      type(value: string) {
        sent.headers['content-type'] = value;
        return reply;
      },
      send(body: unknown) {
        sent.body = body;
        return reply;
      },
    };
    const request = {
      id: 'req_unit0000000001',
      url: '/v1/things/thing_1',
      method: 'GET',
      routeOptions: { url: '/v1/things/:id' },
    };
    const logger = { error: jest.fn(), warn: jest.fn(), info: jest.fn() };
    sendError(exception, request as unknown as FastifyRequest, reply as unknown as FastifyReply, {
      docsUrl: 'https://docs.example.test/docs',
      routes: new RouteTable(),
      logger: logger as unknown as Logger,
    });
    return { sent, logger, request };
  }

  const internalError = {
    error: {
      type: 'server_error',
      code: 'internal_error',
      message: CATALOGUE.internal_error.message,
      param: null,
      request_id: 'req_unit0000000001',
      doc_url: 'https://docs.example.test/docs/errors.html#internal_error',
      retryable: true,
    },
  };

  it.each([
    ['an Error whose message holds a secret', new Error('cannot reach postgres://admin:hunter2@db.internal:5432/prod')],
    ['a TypeError from a bug', new TypeError("Cannot read properties of undefined (reading 'hunter2')")],
    [
      'a database error with its SQL',
      Object.assign(new Error('duplicate key value violates unique constraint "hunter2_idx"'), {
        code: '23505',
        query: 'INSERT INTO api_keys (key_hash) VALUES ($1)',
        parameters: ['hunter2'],
      }),
    ],
    ['a thrown string', 'hunter2 exploded'],
  ])(
    '%s → 500 internal_error, with no stack, message or SQL in the body; logged for operators',
    (_label, exception) => {
      const { sent, logger } = respond(exception);
      expect(sent.status).toBe(500);
      expect(sent.body).toEqual(internalError);
      expect(sent.headers['x-request-id']).toBe('req_unit0000000001');
      expect(sent.headers['content-type']).toMatch(/^application\/json/);
      const text = JSON.stringify(sent.body);
      for (const leak of ['hunter2', 'db.internal', 'INSERT', 'stack', 'TypeError', '    at '])
        expect([leak, text.includes(leak)]).toEqual([leak, false]);
      // The operator gets the full exception (with its stack) and the request id to find it.
      expect(logger.error).toHaveBeenCalledTimes(1);
      expect(logger.error.mock.calls[0][0]).toMatchObject({
        err: exception,
        request_id: 'req_unit0000000001',
        route: '/v1/things/:id',
      });
    },
  );

  it('a dependency outage is a 503 service_unavailable, logged as a warning, not as a crash', () => {
    const { sent, logger } = respond(
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }),
    );
    expect(sent.status).toBe(503);
    expect(sent.body.error).toMatchObject({ code: 'service_unavailable', type: 'server_error', retryable: true });
    expect(JSON.stringify(sent.body)).not.toContain('10.0.0.7');
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.error).not.toHaveBeenCalled();
  });
});

describe('an unexpected exception over HTTP', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('a handler that throws a plain Error answers the internal_error envelope', async () => {
    // Break one dependency in a way no code path expects: the key lookup throws a programming error.
    const repository = api.app.get(ApiKeysRepository);
    const original = repository.findByHash.bind(repository);
    repository.findByHash = async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'secret_column')");
    };
    try {
      const response = await call(api, 'GET', '/v1/account/credits', { key: `mjk_${'a'.repeat(40)}` });
      expectError(api, response, 'internal_error', null);
      expect(response.status).toBe(500);
      expect(JSON.stringify(response.body)).not.toMatch(/secret_column|TypeError|stack|    at /);
      expect(response.body.error.message).toBe(CATALOGUE.internal_error.message);
    } finally {
      repository.findByHash = original;
    }
    const account = await createAccount(api);
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
  });
});
