// Issue 16: an authenticated read of a key this instance has seen costs one Redis round trip — the
// IP's failed-credential budget, the account's request count and the credentials version in one
// script — and keeps every rule the three separate checks had.
import type { Redis } from 'ioredis';
import { REDIS } from '../../src/common/redis/redis.module';
import { call, createAccount, startApi, type JsonResponse, type TestApi } from '../support/app';
import { alignToSecond, expectError } from '../support/error-checks';

/** The names of the commands `redis` sends while `work` runs. */
async function commandsDuring(redis: Redis, work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const original = redis.sendCommand.bind(redis);
  const spy = jest.spyOn(redis, 'sendCommand').mockImplementation((command, stream) => {
    sent.push(command.name);
    return original(command, stream);
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return sent;
}

describe('one Redis round trip per authenticated read', () => {
  let api: TestApi;
  let redis: Redis;

  beforeAll(async () => {
    api = await startApi({ IP_RATE_LIMIT: '3' });
    redis = api.app.get<Redis>(REDIS);
  });
  afterAll(() => api.close());

  it('a key used before: one command for the budget, the rate limit and the credentials version', async () => {
    const account = await createAccount(api, { plan: 'pro' });
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    let response: JsonResponse | undefined;
    const sent = await commandsDuring(redis, async () => {
      response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    });
    expect(response!.status).toBe(200);
    expect(response!.headers.get('x-ratelimit-limit')).toBe('100');
    expect(sent).toEqual(['evalsha']);
  });

  it('a key used before is refused with 429 like any other once the IP spent its budget, and is not counted', async () => {
    const account = await createAccount(api, { plan: 'pro' });
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    // The guesses and the refused request must share one 1-second window: run again if they did not.
    for (let attempt = 0; ; attempt++) {
      await alignToSecond();
      const window = Math.floor(Date.now() / 1000);
      const guesses: JsonResponse[] = [];
      for (let i = 0; i < 3; i++) {
        guesses.push(await call(api, 'GET', '/v1/account/credits', { key: `mjk_${String(i).repeat(40)}` }));
      }
      const refused = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      const counted = await redis.get(`${api.config.redisPrefix}:rl:${account.accountId}:${window}`);
      if (Math.floor(Date.now() / 1000) !== window && attempt < 3) continue;
      expect(guesses.map((guess) => guess.status)).toEqual([401, 401, 401]);
      expectError(api, refused, 'rate_limit_exceeded');
      expect(refused.body.error.message).toMatch(/failed credentials/);
      expect(refused.headers.get('x-ratelimit-limit')).toBeNull();
      expect(counted).toBeNull();
      break;
    }
    await alignToSecond();
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
  });
});
