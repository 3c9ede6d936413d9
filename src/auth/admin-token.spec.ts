import { adminTokenError, isAdminToken, presentedAdminToken } from './admin-token';

const TOKEN = 'operator-token-0123456789';

describe('the operator token check', () => {
  it('accepts exactly the configured token', () => {
    expect(isAdminToken(TOKEN, TOKEN)).toBe(true);
    expect(isAdminToken(TOKEN, `${TOKEN} `)).toBe(false);
    expect(isAdminToken(TOKEN, TOKEN.slice(0, -1))).toBe(false);
    expect(isAdminToken(TOKEN, TOKEN.toUpperCase())).toBe(false);
  });

  it('refuses every value, the empty one too, while ADMIN_TOKEN is unset', () => {
    for (const unset of [null, undefined, '']) {
      expect(isAdminToken(unset, '')).toBe(false);
      expect(isAdminToken(unset, TOKEN)).toBe(false);
    }
    expect(isAdminToken(TOKEN, undefined)).toBe(false);
    expect(isAdminToken(TOKEN, '')).toBe(false);
  });

  it('reads the X-Admin-Token header the same for the admin API and the queue board', () => {
    expect(presentedAdminToken({ 'x-admin-token': TOKEN })).toBe(TOKEN);
    expect(presentedAdminToken({ 'x-admin-token': [TOKEN, 'second'] } as never)).toBe(TOKEN);
    expect(presentedAdminToken({ 'x-admin-token': '' })).toBeUndefined();
    expect(presentedAdminToken({})).toBeUndefined();
  });

  it('compares values of any length without throwing (no length check comes first)', () => {
    for (const presented of ['x', 'x'.repeat(TOKEN.length), 'x'.repeat(10_000), 'é'.repeat(TOKEN.length)])
      expect(isAdminToken(TOKEN, presented)).toBe(false);
  });

  it('refuses with the envelope codes and param a client of the admin API gets', () => {
    expect(adminTokenError(false)).toMatchObject({ code: 'missing_api_key', param: 'X-Admin-Token' });
    expect(adminTokenError(true)).toMatchObject({ code: 'invalid_api_key', param: 'X-Admin-Token' });
    expect(adminTokenError(false, ', or sign in at /admin/queues').message).toBe(
      'Send the operator token in the X-Admin-Token header, or sign in at /admin/queues.',
    );
  });
});
