// Webhook amplification (issue 29 item 5): an account holds at most its plan's number of endpoints
// (quota_exceeded with the numbers), and a second endpoint with the same URL and the same event filter is
// refused (409 webhook_endpoint_exists, param url) — so one event cannot be fanned out to one target
// tens of times. Registration never connects to the URL.
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { expectError, sleep } from '../support/error-checks';

describe('webhook endpoint limits', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi({ REGION: 'wh-limits', ALLOW_PRIVATE_URLS: '127.0.0.1' });
  });
  afterAll(() => api.close());

  const create = (account: TestAccount, url: string, events?: string[]) =>
    call(api, 'POST', '/v1/webhook-endpoints', { key: account.apiKey, body: events ? { url, events } : { url } });

  it('the same URL with the same event filter is refused; another filter or another URL is a new endpoint', async () => {
    const account = await createAccount(api, { plan: 'pro' });
    const first = await create(account, 'http://127.0.0.1:9/hook', ['job.failed', 'job.succeeded']);
    expect(first.status).toBe(201);
    // The same filter in another order, and the same URL spelled differently (the stored, normalised form).
    for (const [url, events] of [
      ['http://127.0.0.1:9/hook', ['job.succeeded', 'job.failed']],
      ['HTTP://127.0.0.1:9/hook', ['job.failed', 'job.succeeded', 'job.failed']],
    ] as const) {
      const again = await create(account, url, [...events]);
      expectError(api, again, 'webhook_endpoint_exists', 'url');
      expect(again.body.error.details).toEqual({ endpoint_id: first.body.id });
    }
    expect((await create(account, 'http://127.0.0.1:9/hook', ['job.failed'])).status).toBe(201);
    expect((await create(account, 'http://127.0.0.1:9/hook')).status).toBe(201);
    expectError(api, await create(account, 'http://127.0.0.1:9/hook'), 'webhook_endpoint_exists', 'url');
    expect((await create(account, 'http://127.0.0.1:9/other', ['job.failed', 'job.succeeded'])).status).toBe(201);
    // Another account may register the same URL.
    expect((await create(await createAccount(api), 'http://127.0.0.1:9/hook')).status).toBe(201);
    // Deleted, it may be registered again.
    expect((await call(api, 'DELETE', `/v1/webhook-endpoints/${first.body.id}`, { key: account.apiKey })).status).toBe(
      200,
    );
    expect((await create(account, 'http://127.0.0.1:9/hook', ['job.failed', 'job.succeeded'])).status).toBe(201);
  });

  it('ten identical registrations at once: exactly one endpoint', async () => {
    const account = await createAccount(api, { plan: 'pro' });
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(account, 'http://127.0.0.1:9/race')));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const listed = await call(api, 'GET', '/v1/webhook-endpoints', { key: account.apiKey });
    expect(listed.body.data).toHaveLength(1);
  });

  it("an account holds at most its plan's endpoints: one more is quota_exceeded with the limit and the count", async () => {
    const account = await createAccount(api, { plan: 'pro' });
    for (let n = 0; n < 20; n++) expect((await create(account, `http://127.0.0.1:9/pro-${n}`)).status).toBe(201);
    const over = await create(account, 'http://127.0.0.1:9/pro-20');
    expectError(api, over, 'quota_exceeded', null);
    expect(over.body.error.details).toEqual({ webhook_endpoints_limit: 20, webhook_endpoints_used: 20 });
    expect(over.body.error.message).toContain('20');
    // Parallel attempts past the limit do not slip through either.
    const burst = await Promise.all(
      Array.from({ length: 4 }, (_, n) => create(account, `http://127.0.0.1:9/burst-${n}`)),
    );
    expect(burst.map((answer) => answer.body.error?.code)).toEqual(Array(4).fill('quota_exceeded'));
    // Removing one makes room for one.
    const listed = await call(api, 'GET', '/v1/webhook-endpoints?limit=100', { key: account.apiKey });
    expect(listed.body.data).toHaveLength(20);
    await call(api, 'DELETE', `/v1/webhook-endpoints/${listed.body.data[0].id}`, { key: account.apiKey });
    expect((await create(account, 'http://127.0.0.1:9/pro-20')).status).toBe(201);
    expectError(api, await create(account, 'http://127.0.0.1:9/pro-21'), 'quota_exceeded');
  });

  it('the limit follows the plan: a free account holds 5', async () => {
    const account = await createAccount(api, { plan: 'free' });
    for (let n = 0; n < 5; n++) expect((await create(account, `http://127.0.0.1:9/free-${n}`)).status).toBe(201);
    await sleep(1100); // the free plan's 5 requests a second
    const over = await create(account, 'http://127.0.0.1:9/free-5');
    expectError(api, over, 'quota_exceeded', null);
    expect(over.body.error.details).toEqual({ webhook_endpoints_limit: 5, webhook_endpoints_used: 5 });
  });
});
