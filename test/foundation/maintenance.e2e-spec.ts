// Maintenance mode (docs/api-decisions.md §2, §8). It is global to the database, so this file keeps the switch
// on for as short a time as it can and always switches it off again: the next test files of its Jest
// worker use the same test database (test/support/test-env.ts).
import { MaintenanceService } from '../../src/common/maintenance/maintenance.service';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { expectError, waitUntil } from '../support/error-checks';

/** Each instance re-reads the switch every second; allow for that query and our polling. */
const PROPAGATION_BUDGET_MS = 1200;

describe('maintenance mode', () => {
  let api: TestApi;
  let second: TestApi;
  let account: TestAccount;

  const setMaintenance = (body: Record<string, unknown>) =>
    call(api, 'PUT', '/v1/admin/maintenance', { admin: true, body });
  const credits = (target: TestApi) => call(target, 'GET', '/v1/account/credits', { key: account.apiKey });

  /**
   * Polls the second instance until it answers `status`: the ms from `since` to when the first request
   * that did was sent. The time it then took to be answered does not count: on a busy machine (other test
   * files run beside this one) an answer can take longer than the propagation itself. A switch learnt late
   * is still caught: the requests sent before it is learnt and handled at once answer the old way.
   */
  async function firstSentAnswering(since: number, status: number): Promise<number> {
    let sentAt = Date.now();
    await waitUntil(async () => {
      sentAt = Date.now();
      return (await credits(second)).status === status;
    }, 5000);
    return sentAt - since;
  }

  beforeAll(async () => {
    [api, second] = await Promise.all([startApi(), startApi()]);
    account = await createAccount(api);
  });

  afterEach(async () => {
    // Whatever happened in the test, nobody else may be left in maintenance.
    await api.app.get(MaintenanceService).set({ enabled: false, until: null });
  });

  afterAll(async () => {
    await Promise.all([api.close(), second.close()]);
  });

  it('on with an end time: non-admin routes answer 503 maintenance_window with Retry-After; admin and health still work; off restores service', async () => {
    expect((await credits(api)).status).toBe(200);
    expect((await credits(second)).status).toBe(200);

    const until = new Date(Date.now() + 120_000).toISOString();
    const on = await setMaintenance({ enabled: true, until });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ object: 'maintenance', enabled: true, until });
    const switchedOnAt = Date.now();

    const refused = await credits(api);
    expectError(api, refused, 'maintenance_window', null);
    expect(refused.status).toBe(503);
    expect(refused.body.error.type).toBe('server_error');
    expect(refused.body.error.retryable).toBe(true);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(115);
    expect(retryAfter).toBeLessThanOrEqual(120);

    // Authentication still comes first (docs/api-decisions.md §2): a request without a key learns that, not the maintenance.
    expectError(api, await call(api, 'GET', '/v1/account/credits'), 'missing_api_key');
    // Operators keep working, and so do the operational endpoints.
    const admin = await call(api, 'GET', `/v1/admin/accounts/${account.accountId}`, { admin: true });
    expect(admin.status).toBe(200);
    expect(admin.body.id).toBe(account.accountId);
    const grant = await call(api, 'POST', `/v1/admin/accounts/${account.accountId}/credits`, {
      admin: true,
      body: { credits: 10, reason: 'during maintenance' },
    });
    expect(grant.status).toBe(201);
    expect((await call(api, 'GET', '/health/live')).status).toBe(200);
    expect((await call(api, 'GET', '/health/ready')).status).toBe(200);

    // The other instance learns it from the database within about a second.
    expect(await firstSentAnswering(switchedOnAt, 503)).toBeLessThanOrEqual(PROPAGATION_BUDGET_MS);
    expectError(second, await credits(second), 'maintenance_window');
    expect((await call(second, 'GET', `/v1/admin/accounts/${account.accountId}`, { admin: true })).status).toBe(200);

    const off = await setMaintenance({ enabled: false });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ object: 'maintenance', enabled: false, until: null });
    const switchedOffAt = Date.now();
    const back = await credits(api);
    expect(back.status).toBe(200);
    expect(back.body.balance_credits).toBe(10);
    expect(await firstSentAnswering(switchedOffAt, 200)).toBeLessThanOrEqual(PROPAGATION_BUDGET_MS);
  });

  it('on without an end time: 503 maintenance_window without Retry-After', async () => {
    const on = await setMaintenance({ enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ object: 'maintenance', enabled: true, until: null });
    const refused = await credits(api);
    expectError(api, refused, 'maintenance_window');
    expect(refused.headers.get('retry-after')).toBeNull();
    expect((await setMaintenance({ enabled: false })).status).toBe(200);
    expect((await credits(api)).status).toBe(200);
  });

  it('maintenance ends by itself when its end time passes', async () => {
    const until = new Date(Date.now() + 1500).toISOString();
    expect((await setMaintenance({ enabled: true, until })).status).toBe(200);
    const refused = await credits(api);
    expectError(api, refused, 'maintenance_window');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    await waitUntil(async () => (await credits(api)).status === 200, 3000, 100);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(until));
  });

  it('the switch is validated, with param', async () => {
    expectError(api, await setMaintenance({}), 'missing_parameter', 'enabled');
    expectError(api, await setMaintenance({ enabled: 'yes' }), 'invalid_parameter', 'enabled');
    expectError(api, await setMaintenance({ enabled: true, until: 'tomorrow' }), 'invalid_parameter', 'until');
    const past = await setMaintenance({ enabled: true, until: new Date(Date.now() - 60_000).toISOString() });
    expectError(api, past, 'invalid_parameter', 'until');
    // Nothing was switched on by the refused calls.
    expect((await credits(api)).status).toBe(200);
  });

  it('only operators can switch it', async () => {
    const response = await call(api, 'PUT', '/v1/admin/maintenance', { key: account.apiKey, body: { enabled: true } });
    expectError(api, response, 'missing_api_key', 'X-Admin-Token');
    expect((await credits(api)).status).toBe(200);
  });
});
