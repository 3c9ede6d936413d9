// The webhook API (scope `webhooks`): endpoint registry with its URL rule, secrets shown only on
// create and rotate, the event log, and tenant isolation. No worker: nothing is sent here.
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { deleteRegisteredEndpoints, emitEvent, registerEndpoint } from '../support/webhook-receiver';

describe('webhook endpoints and events API', () => {
  let api: TestApi;
  let account: TestAccount;

  beforeAll(async () => {
    api = await startApi({ REGION: 'wh-api', ALLOW_PRIVATE_URLS: '127.0.0.1' });
    account = await createAccount(api);
  });
  afterAll(async () => {
    await deleteRegisteredEndpoints(api);
    await api.close();
  });

  it('registers an endpoint: whsec_ secret shown once, all events by default', async () => {
    const created = await call(api, 'POST', '/v1/webhook-endpoints', {
      key: account.apiKey,
      body: { url: 'http://127.0.0.1:9/hook' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      object: 'webhook_endpoint',
      id: expect.stringMatching(/^we_/),
      url: 'http://127.0.0.1:9/hook',
      events: ['job.succeeded', 'job.partially_succeeded', 'job.failed', 'job.cancelled'],
      status: 'enabled',
      disabled_at: null,
      disabled_reason: null,
      previous_secret_expires_at: null,
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    const fetched = await call(api, 'GET', `/v1/webhook-endpoints/${created.body.id}`, { key: account.apiKey });
    expect(fetched.status).toBe(200);
    const { secret, ...withoutSecret } = created.body;
    expect(secret).toBeDefined();
    expect(fetched.body).toEqual(withoutSecret);

    const subset = await registerEndpoint(api, account.apiKey, 'http://127.0.0.1:9/failed-only', ['job.failed']);
    expect(subset.events).toEqual(['job.failed']);
  });

  it('lists endpoints newest first with cursor pagination, never with secrets', async () => {
    const own = await createAccount(api);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await registerEndpoint(api, own.apiKey, `http://127.0.0.1:9/${i}`)).id);
    const first = await call(api, 'GET', '/v1/webhook-endpoints?limit=2', { key: own.apiKey });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[1] });
    expect(first.body.data.map((endpoint: { id: string }) => endpoint.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.data.every((endpoint: object) => !('secret' in endpoint))).toBe(true);
    const second = await call(api, 'GET', `/v1/webhook-endpoints?limit=2&starting_after=${first.body.next_cursor}`, {
      key: own.apiKey,
    });
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.data.map((endpoint: { id: string }) => endpoint.id)).toEqual([ids[0]]);
  });

  it('refuses private, link-local and non-http URLs with invalid_url (param url), and bad events', async () => {
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/',
      'http://[::1]:8080/',
      'ftp://127.0.0.1/x',
      'not a url',
    ]) {
      const started = Date.now();
      const response = await call(api, 'POST', '/v1/webhook-endpoints', { key: account.apiKey, body: { url } });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_url', type: 'invalid_request_error', param: 'url' });
      // An IP literal is judged without any connection: no wait on an unroutable address.
      expect(Date.now() - started).toBeLessThan(1000);
    }
    // Outside production the refusal of a private address names the setting that allows it.
    const loopback = await call(api, 'POST', '/v1/webhook-endpoints', {
      key: account.apiKey,
      body: { url: 'http://[::1]:8080/' },
    });
    expect(loopback.body.error.message).toContain('ALLOW_PRIVATE_URLS');
    const missing = await call(api, 'POST', '/v1/webhook-endpoints', { key: account.apiKey, body: {} });
    expect(missing.body.error).toMatchObject({ code: 'missing_parameter', param: 'url' });
    const badEvent = await call(api, 'POST', '/v1/webhook-endpoints', {
      key: account.apiKey,
      body: { url: 'http://127.0.0.1:9/', events: ['job.exploded'] },
    });
    expect(badEvent.status).toBe(400);
    expect(badEvent.body.error).toMatchObject({ code: 'invalid_parameter', param: 'events' });
  });

  it('rotates the secret: a new one shown once, the old one kept for 24 h', async () => {
    const endpoint = await registerEndpoint(api, account.apiKey, 'http://127.0.0.1:9/rotate');
    const rotated = await call(api, 'POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      key: account.apiKey,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    const overlapHours = (Date.parse(rotated.body.previous_secret_expires_at) - Date.now()) / 3600_000;
    expect(overlapHours).toBeGreaterThan(23.9);
    expect(overlapHours).toBeLessThanOrEqual(24);
  });

  it('deletes an endpoint: 404 resource_missing afterwards', async () => {
    const endpoint = await registerEndpoint(api, account.apiKey, 'http://127.0.0.1:9/delete-me');
    const deleted = await call(api, 'DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { key: account.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ object: 'webhook_endpoint', id: endpoint.id, deleted: true });
    const gone = await call(api, 'GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: account.apiKey });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
    expect((await call(api, 'DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { key: account.apiKey })).status).toBe(
      404,
    );
  });

  it('lists events newest first, filtered by type and job, and shows one exactly as its body', async () => {
    const own = await createAccount(api);
    const failed = await emitEvent(api, own.accountId, 'job.failed');
    const succeeded = await emitEvent(api, own.accountId, 'job.succeeded', null);
    const all = await call(api, 'GET', '/v1/events', { key: own.apiKey });
    expect(all.status).toBe(200);
    expect(all.body.data.map((event: { id: string }) => event.id)).toEqual([succeeded.id, failed.id]);
    expect(all.body.data[1]).toEqual({ object: 'event', ...failed });

    const byType = await call(api, 'GET', '/v1/events?type=job.failed', { key: own.apiKey });
    expect(byType.body.data.map((event: { id: string }) => event.id)).toEqual([failed.id]);
    const byJob = await call(api, 'GET', `/v1/events?job_id=${succeeded.data.job!.job_id}`, { key: own.apiKey });
    expect(byJob.body.data.map((event: { id: string }) => event.id)).toEqual([succeeded.id]);
    const paged = await call(api, 'GET', '/v1/events?limit=1', { key: own.apiKey });
    expect(paged.body).toMatchObject({ has_more: true, next_cursor: succeeded.id });

    const one = await call(api, 'GET', `/v1/events/${failed.id}`, { key: own.apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ object: 'event', ...failed });
    const badType = await call(api, 'GET', '/v1/events?type=job.started', { key: own.apiKey });
    expect(badType.body.error).toMatchObject({ code: 'invalid_parameter', param: 'type' });
  });

  it("another account's endpoints and events are 404 resource_missing, exactly like unknown ids", async () => {
    const owner = await createAccount(api);
    const other = await createAccount(api);
    const endpoint = await registerEndpoint(api, owner.apiKey, 'http://127.0.0.1:9/mine');
    const event = await emitEvent(api, owner.accountId);
    const attempts = [
      ['GET', `/v1/webhook-endpoints/${endpoint.id}`],
      ['DELETE', `/v1/webhook-endpoints/${endpoint.id}`],
      ['POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`],
      ['GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`],
      ['GET', `/v1/events/${event.id}`],
      ['POST', `/v1/events/${event.id}/redeliver`],
      ['GET', '/v1/webhook-endpoints/we_0000000000000000000000'],
      ['GET', '/v1/events/evt_0000000000000000000000'],
    ] as const;
    for (const [method, path] of attempts) {
      const response = await call(api, method, path, { key: other.apiKey });
      expect([path, response.status, response.body.error.code]).toEqual([path, 404, 'resource_missing']);
    }
    const ownEvent = await emitEvent(api, other.accountId);
    const foreignEndpoint = await call(api, 'POST', `/v1/events/${ownEvent.id}/redeliver?endpoint_id=${endpoint.id}`, {
      key: other.apiKey,
    });
    expect(foreignEndpoint.status).toBe(404);
    expect(foreignEndpoint.body.error).toMatchObject({ code: 'resource_missing', param: 'endpoint_id' });
    expect(
      (await call(api, 'GET', '/v1/events', { key: other.apiKey })).body.data.map((e: { id: string }) => e.id),
    ).toEqual([ownEvent.id]);
    // The owner still has everything.
    expect((await call(api, 'GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: owner.apiKey })).status).toBe(200);
  });

  it('needs the webhooks scope', async () => {
    const created = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['sdr2hdr'] },
    });
    expect(created.status).toBe(201);
    const response = await call(api, 'GET', '/v1/webhook-endpoints', { key: created.body.key });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('insufficient_scope');
  });
});
