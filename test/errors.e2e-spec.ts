import { createAccount, call, startApi, type TestApi } from './support/app';

describe('error envelope everywhere', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  function expectEnvelope(response: { status: number; headers: Headers; body: any }, code: string, status: number) {
    expect(response.status).toBe(status);
    expect(response.body.error.code).toBe(code);
    expect(response.body.error.request_id).toMatch(/^req_/);
    expect(response.headers.get('x-request-id')).toBe(response.body.error.request_id);
    expect(response.body.error.doc_url).toBe(`${api.config.docsUrl}/errors.html#${code}`);
  }

  it('unknown route → route_not_found', async () => {
    expectEnvelope(await call(api, 'GET', '/v1/nope'), 'route_not_found', 404);
  });

  it('wrong method → method_not_allowed with Allow', async () => {
    const response = await call(api, 'PUT', '/v1/account/credits');
    expectEnvelope(response, 'method_not_allowed', 405);
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('malformed JSON → invalid_json', async () => {
    const account = await createAccount(api);
    const response = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      rawBody: '{"scopes": [',
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(response, 'invalid_json', 400);
  });

  it('oversized body → request_too_large', async () => {
    const account = await createAccount(api);
    const response = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      rawBody: JSON.stringify({ scopes: ['audio'], pad: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(response, 'request_too_large', 413);
  });

  it('unsupported content type → unsupported_content_type', async () => {
    const account = await createAccount(api);
    const response = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      rawBody: 'scopes=audio',
      headers: { 'content-type': 'text/csv' },
    });
    expectEnvelope(response, 'unsupported_content_type', 415);
  });

  it('validation → missing_parameter / invalid_parameter with param', async () => {
    const account = await createAccount(api);
    const missing = await call(api, 'POST', '/v1/account/api-keys', { key: account.apiKey, body: {} });
    expectEnvelope(missing, 'missing_parameter', 400);
    expect(missing.body.error.param).toBe('scopes');
    const invalid = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['audio', 'root'] },
    });
    expectEnvelope(invalid, 'invalid_parameter', 400);
    expect(invalid.body.error.param).toBe('scopes');
  });

  it('success responses carry X-Request-Id too', async () => {
    const account = await createAccount(api);
    const response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.body).toMatchObject({
      object: 'credit_balance',
      balance_credits: 0,
      available_credits: 0,
      plan: 'pro',
    });
  });
});
