// A failed request's Idempotency-Key release, against PostgreSQL (src/common/idempotency/idempotency.repository.ts):
// it removes only the claim it was made for. A release retried late (the database was away) must not
// free a key that a later request claimed since, or a third request with the key would run the work twice.
import { DataSource } from 'typeorm';
import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { startApi, type TestApi } from '../support/app';
import { createAccountOnPlan } from '../support/chaos-accounts';

describe('releasing an Idempotency-Key', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  async function state(accountId: string, key: string): Promise<string | null> {
    const rows = await api.app
      .get(DataSource)
      .query(`SELECT state FROM idempotency_keys WHERE account_id = $1 AND key = $2`, [accountId, key]);
    return rows[0]?.state ?? null;
  }

  it('frees its own claim, so the retry claims the key again', async () => {
    const { accountId } = await createAccountOnPlan(api, { requestsPerSecond: 100, concurrentJobs: 10 });
    const store = api.app.get(IdempotencyRepository);
    const stamp = await store.claim(accountId, 'own', 'hash-a');
    expect(stamp).not.toBeNull();
    expect(await store.claim(accountId, 'own', 'hash-a')).toBeNull();
    expect(await store.release(accountId, 'own', stamp!)).toBe(true);
    expect(await state(accountId, 'own')).toBeNull();
    expect(await store.claim(accountId, 'own', 'hash-a')).not.toBeNull();
  });

  it('leaves a later claim of the same key alone', async () => {
    const { accountId } = await createAccountOnPlan(api, { requestsPerSecond: 100, concurrentJobs: 10 });
    const store = api.app.get(IdempotencyRepository);
    const first = await store.claim(accountId, 'late', 'hash-a');
    // The first claim counts as abandoned (its request's process died a minute ago): a retry takes it over.
    await api.app
      .get(DataSource)
      .query(
        `UPDATE idempotency_keys SET created_at = now() - interval '61 seconds' WHERE account_id = $1 AND key = $2`,
        [accountId, 'late'],
      );
    const second = await store.claim(accountId, 'late', 'hash-a');
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);
    // The first request's release arrives late: the second request's claim stays.
    expect(await store.release(accountId, 'late', first!)).toBe(true);
    expect(await state(accountId, 'late')).toBe('in_flight');
    expect(await store.claim(accountId, 'late', 'hash-a')).toBeNull();
  });
});
