// Authentication as a client meets it (docs/spec/specification.txt §5, docs/api-decisions.md §3): the six auth codes over real HTTP,
// how keys are stored, rotation, cross-account isolation and revocation across API instances.
import { CredentialsVersion } from '../../src/auth/credentials-version';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { expectError, sleep } from '../support/error-checks';

const KEY_FORMAT = /^mjk_[0-9A-Za-z]{32,}$/;

describe('authentication (docs/spec/specification.txt §5)', () => {
  let api: TestApi;
  let db: DataSource;

  beforeAll(async () => {
    // Every failed attempt counts against the caller's IP; this file makes many on purpose.
    api = await startApi({ IP_RATE_LIMIT: '1000' });
    db = api.app.get(DataSource);
  });
  afterAll(() => api.close());

  /** A second key for `owner`, made through the public API. */
  async function newKey(ownerKey: string, scopes: string[], expiresAt?: string): Promise<{ id: string; key: string }> {
    const response = await call(api, 'POST', '/v1/account/api-keys', {
      key: ownerKey,
      body: expiresAt ? { scopes, expires_at: expiresAt } : { scopes },
    });
    expect(response.status).toBe(201);
    return { id: response.body.id, key: response.body.key };
  }

  describe('the six auth codes', () => {
    it('no X-API-Key header → 401 missing_api_key, param X-API-Key', async () => {
      const response = await call(api, 'GET', '/v1/account/credits');
      expectError(api, response, 'missing_api_key', 'X-API-Key');
      expect(response.status).toBe(401);
      expect(response.body.error.type).toBe('auth_error');
      expect(response.body.error.retryable).toBe(false);
    });

    it('an empty X-API-Key header counts as missing', async () => {
      const response = await call(api, 'GET', '/v1/account/credits', { headers: { 'x-api-key': '' } });
      expectError(api, response, 'missing_api_key', 'X-API-Key');
    });

    it('a well-formed but unknown key → 401 invalid_api_key', async () => {
      const unknown = `mjk_${'A1b2C3d4'.repeat(5)}`;
      expect(unknown).toMatch(KEY_FORMAT);
      const response = await call(api, 'GET', '/v1/account/credits', { key: unknown });
      expectError(api, response, 'invalid_api_key', 'X-API-Key');
      expect(response.status).toBe(401);
    });

    it.each([
      ['not a key at all', 'hello'],
      ['wrong prefix', `sk_${'a'.repeat(40)}`],
      ['too short', 'mjk_abc123'],
      ['non-base62 characters', `mjk_${'a'.repeat(30)}-_+/`],
      ['a real key with a character cut off', null],
    ])('a malformed key (%s) → 401 invalid_api_key', async (_label, value) => {
      let key = value;
      if (key === null) {
        const account = await createAccount(api);
        key = account.apiKey.slice(0, -1);
      }
      const response = await call(api, 'GET', '/v1/account/credits', { key });
      expectError(api, response, 'invalid_api_key', 'X-API-Key');
    });

    it('a key past its expires_at → 401 expired_api_key', async () => {
      const account = await createAccount(api);
      const key = await newKey(account.apiKey, ['account'], new Date(Date.now() + 3_600_000).toISOString());
      expect((await call(api, 'GET', '/v1/account/credits', { key: key.key })).status).toBe(200);
      await db.query(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [key.id]);
      // An edit behind the API's back: announce it as every API and CLI change does (else it applies
      // within the key cache's 10 s backstop).
      await api.app.get(CredentialsVersion).changed();

      const response = await call(api, 'GET', '/v1/account/credits', { key: key.key });
      expectError(api, response, 'expired_api_key', 'X-API-Key');
      expect(response.status).toBe(401);
    });

    it('a key whose expiry passes while it is in use stops working at that moment', async () => {
      const account = await createAccount(api);
      const key = await newKey(account.apiKey, ['account'], new Date(Date.now() + 1500).toISOString());
      expect((await call(api, 'GET', '/v1/account/credits', { key: key.key })).status).toBe(200);
      await sleep(1700);
      expectError(api, await call(api, 'GET', '/v1/account/credits', { key: key.key }), 'expired_api_key');
    });

    it('an expires_at in the past is refused at creation with param expires_at', async () => {
      const account = await createAccount(api);
      const response = await call(api, 'POST', '/v1/account/api-keys', {
        key: account.apiKey,
        body: { scopes: ['account'], expires_at: new Date(Date.now() - 60_000).toISOString() },
      });
      expectError(api, response, 'invalid_parameter', 'expires_at');
    });

    it('a revoked key (DELETE /v1/account/api-keys/{id}) → 401 revoked_api_key, for good', async () => {
      const account = await createAccount(api);
      const key = await newKey(account.apiKey, ['account']);
      expect((await call(api, 'GET', '/v1/account/credits', { key: key.key })).status).toBe(200);

      const revoked = await call(api, 'DELETE', `/v1/account/api-keys/${key.id}`, { key: account.apiKey });
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ object: 'api_key', id: key.id });
      expect(Date.parse(revoked.body.revoked_at)).not.toBeNaN();
      expect(revoked.body.key).toBeUndefined();

      const response = await call(api, 'GET', '/v1/account/credits', { key: key.key });
      expectError(api, response, 'revoked_api_key', 'X-API-Key');
      expect(response.status).toBe(401);
      // Revoking again changes nothing, and the key stays dead.
      const again = await call(api, 'DELETE', `/v1/account/api-keys/${key.id}`, { key: account.apiKey });
      expect(again.status).toBe(200);
      expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
      expectError(api, await call(api, 'GET', '/v1/account/credits', { key: key.key }), 'revoked_api_key');
    });

    it("a key without the route's scope → 403 insufficient_scope", async () => {
      const account = await createAccount(api);
      const audioOnly = await newKey(account.apiKey, ['audio']);
      const response = await call(api, 'GET', '/v1/account/credits', { key: audioOnly.key });
      expectError(api, response, 'insufficient_scope');
      expect(response.status).toBe(403);
      expect(response.body.error.message).toContain('account');
      // Key management needs the "keys" scope, which this key lacks too.
      expectError(api, await call(api, 'GET', '/v1/account/api-keys', { key: audioOnly.key }), 'insufficient_scope');
    });

    it('a suspended account → 403 account_suspended; lifting the suspension restores access', async () => {
      const account = await createAccount(api);
      const patch = (status: string) =>
        call(api, 'PATCH', `/v1/admin/accounts/${account.accountId}`, { admin: true, body: { status } });
      expect((await patch('suspended')).status).toBe(200);

      const response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      expectError(api, response, 'account_suspended');
      expect(response.status).toBe(403);

      expect((await patch('active')).status).toBe(200);
      expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    });

    it('an account with no credits is authenticated (an empty balance is never 401/403)', async () => {
      const account = await createAccount(api, { plan: 'free' });
      const response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ balance_credits: 0, available_credits: 0 });
    });
  });

  describe('key storage and format', () => {
    it('keys are mjk_ + at least 32 base62 characters, and every key is different', async () => {
      const account = await createAccount(api);
      const keys = [account.apiKey];
      for (let i = 0; i < 5; i++) keys.push((await newKey(account.apiKey, ['audio'])).key);
      for (const key of keys) expect(key).toMatch(KEY_FORMAT);
      expect(new Set(keys).size).toBe(keys.length);
    });

    it('the database holds only the SHA-256 of a key, never the key', async () => {
      const account = await createAccount(api);
      const key = await newKey(account.apiKey, ['account', 'audio']);
      const rows: Record<string, unknown>[] = await db.query(`SELECT * FROM api_keys WHERE id = $1`, [key.id]);
      expect(rows).toHaveLength(1);
      const row = rows[0];
      expect(Buffer.isBuffer(row.key_hash)).toBe(true);
      expect((row.key_hash as Buffer).equals(createHash('sha256').update(key.key).digest())).toBe(true);
      const secretPart = key.key.slice('mjk_'.length);
      for (const [column, value] of Object.entries(row)) {
        const text = Buffer.isBuffer(value)
          ? `${value.toString('hex')} ${value.toString('latin1')}`
          : JSON.stringify(value);
        expect([column, text.includes(key.key)]).toEqual([column, false]);
        expect([column, text.includes(secretPart)]).toEqual([column, false]);
      }
      // Nothing else in the database holds it either.
      const dump: { found: boolean }[] = await db.query(
        `SELECT EXISTS (SELECT 1 FROM api_keys k WHERE k::text LIKE '%' || $1 || '%') AS found`,
        [secretPart],
      );
      expect(dump[0].found).toBe(false);
    });

    it('the full key is shown once: listing keys shows prefixes only', async () => {
      const account = await createAccount(api);
      const created = await newKey(account.apiKey, ['audio']);
      const list = await call(api, 'GET', '/v1/account/api-keys', { key: account.apiKey });
      expect(list.status).toBe(200);
      expect(list.body.object).toBe('list');
      expect(list.body.data.map((view: { id: string }) => view.id).sort()).toEqual([account.keyId, created.id].sort());
      const text = JSON.stringify(list.body);
      expect(text).not.toContain(created.key);
      expect(text).not.toContain(account.apiKey);
      const view = list.body.data.find((item: { id: string }) => item.id === created.id);
      expect(view.key).toBeUndefined();
      expect(created.key.startsWith(view.prefix)).toBe(true);
      expect(view.prefix.length).toBeLessThan(created.key.length / 2);
      expect(view.scopes).toEqual(['audio']);
    });
  });

  describe('rotation', () => {
    it('rotate → a new key with the same scopes works, the old key is revoked_api_key at once', async () => {
      const account = await createAccount(api);
      const old = await newKey(account.apiKey, ['account', 'audio']);
      const rotated = await call(api, 'POST', `/v1/account/api-keys/${old.id}/rotate`, {
        key: account.apiKey,
        body: {},
      });
      expect(rotated.status).toBe(201);
      expect(rotated.body.key).toMatch(KEY_FORMAT);
      expect(rotated.body.id).not.toBe(old.id);
      expect(rotated.body.key).not.toBe(old.key);
      expect(rotated.body.scopes.sort()).toEqual(['account', 'audio']);

      expect((await call(api, 'GET', '/v1/account/credits', { key: rotated.body.key })).status).toBe(200);
      expectError(api, await call(api, 'GET', '/v1/account/credits', { key: old.key }), 'revoked_api_key', 'X-API-Key');
      // A revoked key cannot be rotated again.
      const again = await call(api, 'POST', `/v1/account/api-keys/${old.id}/rotate`, { key: account.apiKey, body: {} });
      expect(again.status).toBe(400);
    });

    it('rotate with grace_seconds → the old key keeps working during the grace, then is revoked', async () => {
      const account = await createAccount(api);
      const old = await newKey(account.apiKey, ['account']);
      const rotated = await call(api, 'POST', `/v1/account/api-keys/${old.id}/rotate`, {
        key: account.apiKey,
        body: { grace_seconds: 2 },
      });
      expect(rotated.status).toBe(201);
      expect((await call(api, 'GET', '/v1/account/credits', { key: rotated.body.key })).status).toBe(200);
      expect((await call(api, 'GET', '/v1/account/credits', { key: old.key })).status).toBe(200);
      // The key list tells when the old key stops working.
      const list = await call(api, 'GET', '/v1/account/api-keys', { key: account.apiKey });
      const oldView = list.body.data.find((view: { id: string }) => view.id === old.id);
      const revokesIn = Date.parse(oldView.revoked_at) - Date.now();
      expect(revokesIn).toBeGreaterThan(1000);
      expect(revokesIn).toBeLessThanOrEqual(2000);

      await sleep(2300);
      expectError(api, await call(api, 'GET', '/v1/account/credits', { key: old.key }), 'revoked_api_key', 'X-API-Key');
      expect((await call(api, 'GET', '/v1/account/credits', { key: rotated.body.key })).status).toBe(200);
    });

    it('a key in its grace period can still be revoked at once', async () => {
      const account = await createAccount(api);
      const old = await newKey(account.apiKey, ['account']);
      const rotated = await call(api, 'POST', `/v1/account/api-keys/${old.id}/rotate`, {
        key: account.apiKey,
        body: { grace_seconds: 3600 },
      });
      expect(rotated.status).toBe(201);
      expect((await call(api, 'GET', '/v1/account/credits', { key: old.key })).status).toBe(200);
      expect((await call(api, 'DELETE', `/v1/account/api-keys/${old.id}`, { key: account.apiKey })).status).toBe(200);
      expectError(api, await call(api, 'GET', '/v1/account/credits', { key: old.key }), 'revoked_api_key');
    });

    it('rotating an expired key → 400 invalid_parameter, param id: no replacement, the expired key stays dead', async () => {
      const account = await createAccount(api);
      const old = await newKey(account.apiKey, ['account'], new Date(Date.now() + 3_600_000).toISOString());
      await db.query(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [old.id]);
      await api.app.get(CredentialsVersion).changed();
      const keysBefore = (await call(api, 'GET', '/v1/account/api-keys', { key: account.apiKey })).body.data.length;

      const response = await call(api, 'POST', `/v1/account/api-keys/${old.id}/rotate`, {
        key: account.apiKey,
        body: {},
      });
      expectError(api, response, 'invalid_parameter', 'id');
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain('expired');
      expect(response.body).not.toHaveProperty('key');
      const keysAfter = (await call(api, 'GET', '/v1/account/api-keys', { key: account.apiKey })).body.data;
      expect(keysAfter).toHaveLength(keysBefore);
      expectError(api, await call(api, 'GET', '/v1/account/credits', { key: old.key }), 'expired_api_key');
    });

    it("a rotation keeps the old key's expiry", async () => {
      const account = await createAccount(api);
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const old = await newKey(account.apiKey, ['account'], expiresAt);
      const rotated = await call(api, 'POST', `/v1/account/api-keys/${old.id}/rotate`, {
        key: account.apiKey,
        body: {},
      });
      expect(rotated.status).toBe(201);
      expect(rotated.body.expires_at).toBe(expiresAt);
    });

    it('grace_seconds is validated, with param', async () => {
      const account = await createAccount(api);
      const response = await call(api, 'POST', `/v1/account/api-keys/${account.keyId}/rotate`, {
        key: account.apiKey,
        body: { grace_seconds: -1 },
      });
      expectError(api, response, 'invalid_parameter', 'grace_seconds');
      expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    });
  });

  describe('isolation between accounts', () => {
    it("account A cannot revoke or rotate account B's key: 404 resource_missing, and B's key keeps working", async () => {
      const a = await createAccount(api);
      const b = await createAccount(api);
      const revoke = await call(api, 'DELETE', `/v1/account/api-keys/${b.keyId}`, { key: a.apiKey });
      expectError(api, revoke, 'resource_missing', 'id');
      expect(revoke.status).toBe(404);
      const rotate = await call(api, 'POST', `/v1/account/api-keys/${b.keyId}/rotate`, { key: a.apiKey, body: {} });
      expectError(api, rotate, 'resource_missing', 'id');

      // The answer is the same as for an id that does not exist at all, so existence does not leak.
      const unknown = await call(api, 'DELETE', `/v1/account/api-keys/key_doesnotexist00000000`, { key: a.apiKey });
      expectError(api, unknown, 'resource_missing', 'id');
      expect(unknown.body.error.message).toBe(revoke.body.error.message);

      expect((await call(api, 'GET', '/v1/account/credits', { key: b.apiKey })).status).toBe(200);
      const listA = await call(api, 'GET', '/v1/account/api-keys', { key: a.apiKey });
      expect(listA.body.data.map((view: { id: string }) => view.id)).toEqual([a.keyId]);
    });
  });

  describe('revocation across API instances', () => {
    let second: TestApi;
    beforeAll(async () => {
      second = await startApi({ IP_RATE_LIMIT: '1000' });
    });
    afterAll(() => second.close());

    it('a key revoked through instance 1 is refused by instance 2 within one second', async () => {
      const account = await createAccount(api);
      const key = await newKey(account.apiKey, ['account']);
      // Instance 2 has just accepted the key (anything it might cache is warm).
      for (let i = 0; i < 3; i++)
        expect((await call(second, 'GET', '/v1/account/credits', { key: key.key })).status).toBe(200);

      const revoked = await call(api, 'DELETE', `/v1/account/api-keys/${key.id}`, { key: account.apiKey });
      expect(revoked.status).toBe(200);
      const revokedAt = Date.now();

      const response = await call(second, 'GET', '/v1/account/credits', { key: key.key });
      const elapsed = Date.now() - revokedAt;
      expectError(second, response, 'revoked_api_key', 'X-API-Key');
      expect(elapsed).toBeLessThan(1000);
    });

    it('a suspension made through instance 1 is seen by instance 2 within one second', async () => {
      const account = await createAccount(api);
      expect((await call(second, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
      const patched = await call(api, 'PATCH', `/v1/admin/accounts/${account.accountId}`, {
        admin: true,
        body: { status: 'suspended' },
      });
      expect(patched.status).toBe(200);
      const patchedAt = Date.now();
      const response = await call(second, 'GET', '/v1/account/credits', { key: account.apiKey });
      expect(Date.now() - patchedAt).toBeLessThan(1000);
      expectError(second, response, 'account_suspended');
    });
  });
});
