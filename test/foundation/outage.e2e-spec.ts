// Redis or Postgres unreachable (issue 2, docs/api-decisions.md §1): the API answers a 503 service_unavailable
// envelope quickly instead of hanging or crashing, readiness reports it, liveness does not, and the
// API recovers by itself. The real servers stay up: each API here reaches its dependency through a
// loopback proxy that the test takes down and brings back.
import { call, createAccount, startApi, type JsonResponse, type TestAccount, type TestApi } from '../support/app';
import { TcpProxy } from '../support/tcp-proxy';
import { expectError, sleep, waitUntil } from '../support/error-checks';

const FAST_MS = 5000;

async function timed(request: Promise<JsonResponse>): Promise<{ response: JsonResponse; ms: number }> {
  const started = Date.now();
  const response = await request;
  return { response, ms: Date.now() - started };
}

function expectUnavailable(api: TestApi, outcome: { response: JsonResponse; ms: number }): void {
  expectError(api, outcome.response, 'service_unavailable');
  expect(outcome.response.status).toBe(503);
  expect(outcome.response.body.error.retryable).toBe(true);
  expect(outcome.ms).toBeLessThan(FAST_MS);
  // Nothing of the driver's own error reaches the client.
  const { doc_url: _docUrl, ...rest } = outcome.response.body.error;
  expect(JSON.stringify(rest)).not.toMatch(
    /ECONNREFUSED|ECONNRESET|127\.0\.0\.1|:6379|:5432|\bat \S+ \(|stack|SELECT /i,
  );
}

describe.each([
  // The admin API keeps no state in Redis, so operators can still work through a Redis outage.
  { dependency: 'Redis', target: 6379, adminWorks: true },
  { dependency: 'Postgres', target: 5432, adminWorks: false },
])('$dependency down', ({ dependency, target, adminWorks }) => {
  let proxy: TcpProxy;
  let api: TestApi;
  let account: TestAccount;

  beforeAll(async () => {
    proxy = await TcpProxy.start(target);
    const overrides: Record<string, string> =
      dependency === 'Redis'
        ? { REDIS_URL: `redis://127.0.0.1:${proxy.port}` }
        : { DATABASE_URL: (process.env.DATABASE_URL ?? '').replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`) };
    if (dependency === 'Postgres') expect(overrides.DATABASE_URL).toContain(`:${proxy.port}/`);
    api = await startApi(overrides);
    account = await createAccount(api);
  });

  afterAll(async () => {
    await proxy.reopen();
    await api.close();
    await proxy.close();
  });

  it('with the dependency up, the API answers normally through the proxy', async () => {
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    const ready = await call(api, 'GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ postgres: 'up', redis: 'up' });
  });

  it('while it is down: authenticated requests get a fast 503 service_unavailable, readiness is 503, liveness 200', async () => {
    await proxy.close();
    try {
      // Every request fails the same way, including the first ones on connections that were cut.
      for (let i = 0; i < 3; i++) {
        expectUnavailable(api, await timed(call(api, 'GET', '/v1/account/credits', { key: account.apiKey })));
      }
      // A request without a key needs no dependency to be answered: still 401 missing_api_key, at once.
      const noKey = await timed(call(api, 'GET', '/v1/account/credits'));
      expectError(api, noKey.response, 'missing_api_key');
      expect(noKey.ms).toBeLessThan(FAST_MS);
      const admin = await timed(call(api, 'GET', `/v1/admin/accounts/${account.accountId}`, { admin: true }));
      if (adminWorks) expect(admin.response.status).toBe(200);
      else expectUnavailable(api, admin);

      const ready = await timed(call(api, 'GET', '/health/ready'));
      expectUnavailable(api, ready);
      expect(ready.response.body.error.details).toEqual({ down: [dependency.toLowerCase()] });

      const live = await timed(call(api, 'GET', '/health/live'));
      expect(live.response.status).toBe(200);
      expect(live.response.body).toEqual({ status: 'ok' });
      expect(live.response.headers.get('x-request-id')).toMatch(/^req_/);
      expect(live.ms).toBeLessThan(1000);

      // Requests made at the same time all come back (nothing queues up behind the outage).
      const burst = await Promise.all(
        Array.from({ length: 5 }, () => timed(call(api, 'GET', '/v1/account/credits', { key: account.apiKey }))),
      );
      for (const outcome of burst) expectUnavailable(api, outcome);
    } finally {
      await proxy.reopen();
    }
  });

  it('after it comes back, requests succeed again without restarting the API', async () => {
    const recoveredIn = await waitUntil(
      async () => (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status === 200,
      15_000,
      200,
    );
    expect(recoveredIn).toBeLessThan(15_000);
    const ready = await call(api, 'GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { postgres: 'up', redis: 'up' } });
    // And it still writes: a new key can be created and used.
    const created = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['account'] },
    });
    expect(created.status).toBe(201);
    expect((await call(api, 'GET', '/v1/account/credits', { key: created.body.key })).status).toBe(200);
  });

  it('a second outage is handled like the first', async () => {
    await proxy.close();
    try {
      expectUnavailable(api, await timed(call(api, 'GET', '/v1/account/credits', { key: account.apiKey })));
    } finally {
      await proxy.reopen();
    }
    await waitUntil(
      async () => (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status === 200,
      15_000,
      200,
    );
  });
});

// A Redis that stops answering without closing its connections (a partition, a server stuck in a slow
// command) is not refused at once: the API's client gives a command 1 s (commandTimeout). A request
// still gets its 503 within about two of those (its Redis calls are few and short), and so do the
// requests that arrive while earlier ones wait: they must not queue up behind them.
describe('Redis stops answering, connections open', () => {
  const STALL_BOUND_MS = 3000;
  let proxy: TcpProxy;
  let api: TestApi;
  let account: TestAccount;

  beforeAll(async () => {
    proxy = await TcpProxy.start(6379);
    api = await startApi({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
    account = await createAccount(api);
  });

  afterAll(async () => {
    proxy.resume();
    await api.close();
    await proxy.close();
  });

  it(`authenticated requests get 503 within ${STALL_BOUND_MS} ms, also those arriving while others wait; it recovers`, async () => {
    const before = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    expect(before.status).toBe(200);
    proxy.stall();
    try {
      const first = timed(call(api, 'GET', '/v1/account/credits', { key: account.apiKey }));
      await sleep(300);
      const later = Array.from({ length: 3 }, () =>
        timed(call(api, 'GET', '/v1/account/credits', { key: account.apiKey })),
      );
      for (const outcome of await Promise.all([first, ...later])) {
        expectUnavailable(api, outcome);
        expect(outcome.ms).toBeLessThan(STALL_BOUND_MS);
      }
    } finally {
      proxy.resume();
    }
    // The answers held during the stall arrive now, to the commands that timed out; later commands
    // must still get their own answers.
    await waitUntil(
      async () => (await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status === 200,
      15_000,
      200,
    );
    for (let i = 0; i < 5; i++) {
      const credits = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      expect(credits.status).toBe(200);
      expect(credits.body).toEqual(before.body);
      expect(credits.headers.get('x-ratelimit-limit')).toBe(before.headers.get('x-ratelimit-limit'));
      expect(Number(credits.headers.get('x-ratelimit-remaining'))).toBeLessThan(
        Number(before.headers.get('x-ratelimit-limit')),
      );
    }
  });
});
