// Issue 12 item 7 (and issue 36 item 7 for revoke): a key may create, rotate or revoke only keys within its own powers — scopes among its own,
// an expiry no later than its own — otherwise 403 insufficient_scope and nothing changes. A dashboard
// session is a member, not a key: an owner may create any key, a viewer none.
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { asMember, redeem, PASSWORD, uniqueEmail } from '../support/dashboard-session';
import { expectError } from '../support/error-checks';

const inHours = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString();

describe('keys cannot mint more power than they have', () => {
  let api: TestApi;
  let account: TestAccount;
  /** Scoped only to `keys`, expiring in an hour: what the review used. */
  let keysOnly: { id: string; key: string; expires_at: string };

  beforeAll(async () => {
    api = await startApi({ IP_RATE_LIMIT: '1000' });
    account = await createAccount(api);
    const created = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['keys'], expires_at: inHours(1) },
    });
    expect(created.status).toBe(201);
    keysOnly = created.body;
  });
  afterAll(() => api.close());

  const listKeys = async () =>
    (await call(api, 'GET', '/v1/account/api-keys?limit=100', { key: account.apiKey })).body.data as {
      id: string;
      revoked_at: string | null;
    }[];

  it('a keys-only key cannot create a key with other scopes: 403 insufficient_scope, param scopes, no key made', async () => {
    const before = await listKeys();
    const response = await call(api, 'POST', '/v1/account/api-keys', {
      key: keysOnly.key,
      body: { scopes: ['sdr2hdr', 'audio', 'account', 'keys', 'webhooks'], expires_at: inHours(0.5) },
    });
    expectError(api, response, 'insufficient_scope', 'scopes');
    expect(response.status).toBe(403);
    expect(response.body.error.message).toContain('sdr2hdr');
    expect(await listKeys()).toHaveLength(before.length);
  });

  it('an expiring key cannot create a key without expiry or outliving it: 403 insufficient_scope, param expires_at', async () => {
    const forever = await call(api, 'POST', '/v1/account/api-keys', { key: keysOnly.key, body: { scopes: ['keys'] } });
    expectError(api, forever, 'insufficient_scope', 'expires_at');
    const later = await call(api, 'POST', '/v1/account/api-keys', {
      key: keysOnly.key,
      body: { scopes: ['keys'], expires_at: inHours(2) },
    });
    expectError(api, later, 'insufficient_scope', 'expires_at');
  });

  it('within its powers it still creates keys (same or fewer scopes, expiring no later)', async () => {
    const response = await call(api, 'POST', '/v1/account/api-keys', {
      key: keysOnly.key,
      body: { scopes: ['keys'], expires_at: inHours(0.5) },
    });
    expect(response.status).toBe(201);
    expect(response.body.scopes).toEqual(['keys']);
  });

  it('a keys-only key cannot rotate the all-scope primary key to receive its replacement; the primary keeps working', async () => {
    const response = await call(api, 'POST', `/v1/account/api-keys/${account.keyId}/rotate`, {
      key: keysOnly.key,
      body: {},
    });
    expectError(api, response, 'insufficient_scope', 'scopes');
    expect(response.body).not.toHaveProperty('key');
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    expect((await listKeys()).find((key) => key.id === account.keyId)!.revoked_at).toBeNull();
  });

  it('an expiring key cannot rotate a never-expiring key of its own scopes, but may rotate one expiring no later', async () => {
    const permanent = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['keys'] },
    });
    const refused = await call(api, 'POST', `/v1/account/api-keys/${permanent.body.id}/rotate`, {
      key: keysOnly.key,
      body: {},
    });
    expectError(api, refused, 'insufficient_scope', 'expires_at');
    const shortLived = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['keys'], expires_at: inHours(0.25) },
    });
    const rotated = await call(api, 'POST', `/v1/account/api-keys/${shortLived.body.id}/rotate`, {
      key: keysOnly.key,
      body: {},
    });
    expect(rotated.status).toBe(201);
    expect(rotated.body.expires_at).toBe(shortLived.body.expires_at);
  });

  it('revoking needs the same powers as rotating: a keys-only key cannot revoke the all-scope primary key, which keeps working', async () => {
    const response = await call(api, 'DELETE', `/v1/account/api-keys/${account.keyId}`, { key: keysOnly.key });
    expectError(api, response, 'insufficient_scope', 'scopes');
    expect(response.status).toBe(403);
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    expect((await listKeys()).find((key) => key.id === account.keyId)!.revoked_at).toBeNull();
  });

  it('an expiring key cannot revoke a never-expiring key of its own scopes, but may revoke one expiring no later', async () => {
    const permanent = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['keys'] },
    });
    const refused = await call(api, 'DELETE', `/v1/account/api-keys/${permanent.body.id}`, { key: keysOnly.key });
    expectError(api, refused, 'insufficient_scope', 'expires_at');
    expect((await call(api, 'GET', '/v1/account/api-keys', { key: permanent.body.key })).status).toBe(200);

    const shortLived = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['keys'], expires_at: inHours(0.25) },
    });
    const revoked = await call(api, 'DELETE', `/v1/account/api-keys/${shortLived.body.id}`, { key: keysOnly.key });
    expect(revoked.status).toBe(200);
    expectError(api, await call(api, 'GET', '/v1/account/api-keys', { key: shortLived.body.key }), 'revoked_api_key');
  });

  it('the all-scope primary key (no expiry) may create any key and rotate any key', async () => {
    const created = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['sdr2hdr', 'audio', 'account', 'keys', 'webhooks'] },
    });
    expect(created.status).toBe(201);
    const rotated = await call(api, 'POST', `/v1/account/api-keys/${created.body.id}/rotate`, {
      key: account.apiKey,
      body: {},
    });
    expect(rotated.status).toBe(201);
  });

  it('a dashboard session is a member, not a key: an owner creates a permanent all-scope key, a viewer none', async () => {
    const email = uniqueEmail('owner');
    const created = await call(api, 'POST', '/v1/admin/accounts', {
      admin: true,
      body: { name: 'Escalation Studio', plan: 'pro', owner_email: email },
    });
    expect(created.status).toBe(201);
    const owner = await redeem(api, created.body.owner_invite_url, PASSWORD);
    const ownerKey = await asMember(api, owner, 'POST', '/v1/account/api-keys', {
      body: { scopes: ['sdr2hdr', 'audio', 'account', 'keys', 'webhooks'] },
    });
    expect(ownerKey.status).toBe(201);
    expect(ownerKey.body.expires_at).toBeNull();

    const viewerEmail = uniqueEmail('viewer');
    const invited = await asMember(api, owner, 'POST', '/v1/account/members', {
      body: { email: viewerEmail, role: 'viewer' },
    });
    expect(invited.status).toBe(201);
    const viewer = await redeem(api, invited.body.invite_url, PASSWORD);
    expectError(
      api,
      await asMember(api, viewer, 'POST', '/v1/account/api-keys', { body: { scopes: ['audio'] } }),
      'insufficient_scope',
    );
  });
});
