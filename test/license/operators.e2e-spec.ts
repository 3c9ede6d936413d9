// Issuing and revoking licences (docs/api-decisions.md §8): /v1/admin/licenses behind X-Admin-Token, and the
// operator CLI built into dist/, run as an operator would run it.
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { ensureBuilt, runScript } from '../support/dist-build';
import { expectError } from '../support/error-checks';
import { activate } from '../support/licenses';

const inDays = (days: number) => new Date(Date.now() + days * 86400 * 1000).toISOString();

describe('operators issue and revoke licences', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ IP_RATE_LIMIT: '1000' });
  });
  afterAll(() => api.close());

  const admin = (method: string, path: string, body?: unknown) =>
    call(api, method, `/v1/admin/licenses${path}`, { admin: true, body });

  it('POST /v1/admin/licenses → the licence and its mjl_ key, shown once and stored only hashed', async () => {
    const account = await createAccount(api);
    const expiresAt = inDays(365);
    const created = await admin('POST', '', { account_id: account.accountId, max_devices: 3, expires_at: expiresAt });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'license',
      id: expect.stringMatching(/^lic_[0-9A-Za-z]+$/),
      account_id: account.accountId,
      plan: 'standard',
      max_devices: 3,
      active_devices: 0,
      expires_at: expiresAt,
      offline_grace_seconds: 7 * 86400,
      revoked_at: null,
      license_key: expect.stringMatching(/^mjl_[0-9A-Za-z]{32,}$/),
    });
    const key: string = created.body.license_key;
    expect(key.startsWith(created.body.key_prefix)).toBe(true);

    const db = api.app.get(DataSource);
    const [stored] = (await db.query('SELECT * FROM licenses WHERE id = $1', [created.body.id])) as Record<
      string,
      unknown
    >[];
    expect(stored.key_hash).toEqual(createHash('sha256').update(key).digest());
    expect(JSON.stringify(stored)).not.toContain(key.slice(12));

    const read = await admin('GET', `/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.license_key).toBeUndefined();
    expect(read.body).toEqual({ ...created.body, license_key: undefined });
    expect((await activate(api, key, 'machine-a')).status).toBe(200);
    expect((await admin('GET', `/${created.body.id}`)).body.active_devices).toBe(1);
  });

  it('offline_grace_seconds and plan are taken when given', async () => {
    const account = await createAccount(api);
    const created = await admin('POST', '', {
      account_id: account.accountId,
      max_devices: 1,
      expires_at: inDays(30),
      offline_grace_seconds: 3600,
      plan: 'studio',
    });
    expect(created.body).toMatchObject({ offline_grace_seconds: 3600, plan: 'studio' });
  });

  it('revoke → revoked_at set (a second revoke keeps the first time); the key is license_invalid from then on', async () => {
    const account = await createAccount(api);
    const created = await admin('POST', '', { account_id: account.accountId, max_devices: 1, expires_at: inDays(30) });
    const revoked = await admin('POST', `/${created.body.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(Date.parse(revoked.body.revoked_at)).toBeLessThanOrEqual(Date.now());
    const again = await admin('POST', `/${created.body.id}/revoke`);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
    expectError(api, await activate(api, created.body.license_key, 'machine-a'), 'license_invalid');
  });

  it.each([
    [{ max_devices: 1, expires_at: inDays(1) }, 'missing_parameter', 'account_id'],
    [{ account_id: '{acct}', expires_at: inDays(1) }, 'missing_parameter', 'max_devices'],
    [{ account_id: '{acct}', max_devices: 0, expires_at: inDays(1) }, 'invalid_parameter', 'max_devices'],
    [{ account_id: '{acct}', max_devices: 1.5, expires_at: inDays(1) }, 'invalid_parameter', 'max_devices'],
    [{ account_id: '{acct}', max_devices: 1 }, 'missing_parameter', 'expires_at'],
    [{ account_id: '{acct}', max_devices: 1, expires_at: 'tomorrow' }, 'invalid_parameter', 'expires_at'],
    [{ account_id: '{acct}', max_devices: 1, expires_at: inDays(-1) }, 'invalid_parameter', 'expires_at'],
    [
      { account_id: '{acct}', max_devices: 1, expires_at: inDays(1), offline_grace_seconds: 0 },
      'invalid_parameter',
      'offline_grace_seconds',
    ],
    [{ account_id: '{acct}', max_devices: 1, expires_at: inDays(1), plan: '' }, 'invalid_parameter', 'plan'],
    [{ account_id: '{acct}', max_devices: 1, expires_at: inDays(1), key: 'mjl_mine' }, 'invalid_parameter', 'key'],
    [
      { account_id: 'acct_doesnotexist0000000', max_devices: 1, expires_at: inDays(1) },
      'resource_missing',
      'account_id',
    ],
  ] as const)('POST %j → %s (param %s)', async (body, code, param) => {
    const account = await createAccount(api);
    const filled = JSON.parse(JSON.stringify(body).replace('{acct}', account.accountId));
    expectError(api, await admin('POST', '', filled), code, param);
  });

  it('unknown licence id → 404 resource_missing on read and revoke', async () => {
    expectError(api, await admin('GET', '/lic_doesnotexist0000000'), 'resource_missing', 'id');
    expectError(api, await admin('POST', '/lic_doesnotexist0000000/revoke'), 'resource_missing', 'id');
  });

  it('needs X-Admin-Token: missing → missing_api_key, wrong → invalid_api_key, an API key is not one', async () => {
    const account = await createAccount(api);
    const body = { account_id: account.accountId, max_devices: 1, expires_at: inDays(1) };
    expectError(api, await call(api, 'POST', '/v1/admin/licenses', { body }), 'missing_api_key', 'X-Admin-Token');
    const wrong = await call(api, 'POST', '/v1/admin/licenses', {
      body,
      headers: { 'x-admin-token': 'not-the-admin-token-at-all' },
    });
    expectError(api, wrong, 'invalid_api_key', 'X-Admin-Token');
    expectError(api, await call(api, 'POST', '/v1/admin/licenses', { body, key: account.apiKey }), 'missing_api_key');
    expectError(api, await call(api, 'POST', '/v1/admin/licenses/lic_x/revoke'), 'missing_api_key', 'X-Admin-Token');
    const count = (await api.app
      .get(DataSource)
      .query('SELECT count(*)::int AS n FROM licenses WHERE account_id = $1', [account.accountId])) as { n: number }[];
    expect(count[0].n).toBe(0);
  });

  describe('operator CLI (dist/src/admin-cli.js)', () => {
    let cli = '';
    beforeAll(() => {
      cli = ensureBuilt('dist/src/admin-cli.js');
    }, 180_000);

    it('create-license prints the licence and an mjl_ key that activates; revoke-license stops it', async () => {
      const account = await createAccount(api);
      const expiresAt = inDays(90);
      const created = await runScript(cli, [
        'create-license',
        account.accountId,
        '--max-devices',
        '2',
        '--expires-at',
        expiresAt,
        '--grace-seconds',
        '86400',
        '--plan',
        'studio',
      ]);
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const printed = JSON.parse(created.stdout);
      expect(printed).toMatchObject({
        object: 'license',
        account_id: account.accountId,
        max_devices: 2,
        expires_at: expiresAt,
        offline_grace_seconds: 86400,
        plan: 'studio',
      });
      expect(printed.license_key).toMatch(/^mjl_[0-9A-Za-z]{32,}$/);
      const activated = await activate(api, printed.license_key, 'machine-a');
      expect(activated.status).toBe(200);
      expect(activated.body.license).toMatchObject({ id: printed.id, plan: 'studio', max_devices: 2 });

      const revoked = await runScript(cli, ['revoke-license', printed.id]);
      expect(revoked.code).toBe(0);
      expect(JSON.parse(revoked.stdout)).toMatchObject({ id: printed.id, revoked_at: expect.any(String) });
      expectError(api, await activate(api, printed.license_key, 'machine-a'), 'license_invalid');
    });

    it.each([
      ['without --max-devices', ['create-license', 'acct_x', '--expires-at', '2030-01-01T00:00:00Z']],
      ['with a non-integer --max-devices', ['create-license', 'acct_x', '--max-devices', '1.5', '--expires-at', 'x']],
      ['without --expires-at', ['create-license', 'acct_x', '--max-devices', '1']],
      ['without an account', ['create-license', '--max-devices', '1', '--expires-at', '2030-01-01T00:00:00Z']],
      ['revoke-license without an id', ['revoke-license']],
    ])('a usage error (%s) exits 2 with the usage text', async (_label, args) => {
      const result = await runScript(cli, args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('Usage: npm run admin -- <command>');
      expect(result.stdout).toBe('');
    });

    it('an operation the service refuses exits 1 with the error code', async () => {
      const past = await runScript(cli, [
        'create-license',
        'acct_doesnotexist0000000',
        '--max-devices',
        '1',
        '--expires-at',
        '2001-01-01T00:00:00Z',
      ]);
      expect(past.code).toBe(1);
      expect(past.stderr).toContain('invalid_parameter');
      const unknown = await runScript(cli, ['revoke-license', 'lic_doesnotexist0000000']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('resource_missing');
    });
  });
});
