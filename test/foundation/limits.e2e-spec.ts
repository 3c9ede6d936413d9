// Request-rate limits (docs/spec/specification.txt §8, docs/api-decisions.md §1–§3): per account by plan in 1-second windows kept in
// Redis (so they hold across API instances), per IP for unauthenticated traffic, and the 429
// envelope with its headers. Bursts start at the beginning of a second so they fit one window;
// a burst that still straddles two windows is run again.
import { call, createAccount, startApi, type JsonResponse, type TestApi } from '../support/app';
import { alignToSecond, expectError, sleep } from '../support/error-checks';

const FREE_LIMIT = 5; // docs/api-decisions.md §3: free = 5 requests/s

interface Burst {
  responses: JsonResponse[];
  oneWindow: boolean;
}

/** Runs `fire` in one 1-second window (retrying when the window rolled over in the middle). */
async function inOneWindow(fire: () => Promise<JsonResponse[]>): Promise<JsonResponse[]> {
  let last: Burst | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    await alignToSecond();
    const window = Math.floor(Date.now() / 1000);
    const responses = await fire();
    last = { responses, oneWindow: Math.floor(Date.now() / 1000) === window };
    if (last.oneWindow) return last.responses;
  }
  throw new Error('could not fit the burst in one 1-second window in 4 attempts');
}

describe('rate limits', () => {
  let api: TestApi;
  let second: TestApi;

  beforeAll(async () => {
    [api, second] = await Promise.all([startApi(), startApi()]);
  });
  afterAll(async () => {
    await Promise.all([api.close(), second.close()]);
  });

  describe('per account, by plan', () => {
    it('a free account gets 5 requests in a second; the 6th is 429 rate_limit_exceeded with details and Retry-After', async () => {
      const account = await createAccount(api, { plan: 'free' });
      const responses = await inOneWindow(async () => {
        const seen: JsonResponse[] = [];
        for (let i = 0; i < FREE_LIMIT * 3; i++) {
          const response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
          seen.push(response);
          if (response.status === 429) break;
        }
        return seen;
      });

      expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 429]);
      const limited = responses[FREE_LIMIT];
      expectError(api, limited, 'rate_limit_exceeded', null);
      expect(limited.body.error.type).toBe('rate_limit_error');
      expect(limited.body.error.retryable).toBe(true);
      const { details } = limited.body.error;
      expect(details).toEqual({ limit: FREE_LIMIT, window_seconds: 1, retry_after_seconds: expect.any(Number) });
      expect(Number.isInteger(details.retry_after_seconds)).toBe(true);
      expect(details.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(limited.headers.get('retry-after')).toBe(String(details.retry_after_seconds));
      expect(limited.headers.get('x-ratelimit-limit')).toBe(String(FREE_LIMIT));
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');

      // Waiting as told is enough.
      await sleep(details.retry_after_seconds * 1000);
      expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    });

    it('authenticated 200s carry X-RateLimit-Limit / -Remaining / -Reset', async () => {
      const account = await createAccount(api, { plan: 'free' });
      const responses = await inOneWindow(async () => {
        const seen: JsonResponse[] = [];
        for (let i = 0; i < 3; i++) seen.push(await call(api, 'GET', '/v1/account/credits', { key: account.apiKey }));
        return seen;
      });
      responses.forEach((response, index) => {
        expect(response.status).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBe(String(FREE_LIMIT));
        expect(response.headers.get('x-ratelimit-remaining')).toBe(String(FREE_LIMIT - 1 - index));
        // Seconds until the 1-second window ends, rounded up.
        expect(response.headers.get('x-ratelimit-reset')).toBe('1');
      });
    });

    it('the limit follows the plan: starter allows 20 per second', async () => {
      const account = await createAccount(api, { plan: 'starter' });
      const responses = await inOneWindow(() =>
        Promise.all(Array.from({ length: 24 }, () => call(api, 'GET', '/v1/account/credits', { key: account.apiKey }))),
      );
      expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
      const limited = responses.filter((response) => response.status === 429);
      expect(limited).toHaveLength(4);
      expect(limited[0].body.error.details.limit).toBe(20);
      expect(responses.find((response) => response.status === 200)?.headers.get('x-ratelimit-limit')).toBe('20');
    });

    it('a plan change takes effect on the next request', async () => {
      const account = await createAccount(api, { plan: 'free' });
      const patched = await call(api, 'PATCH', `/v1/admin/accounts/${account.accountId}`, {
        admin: true,
        body: { plan: 'starter' },
      });
      expect(patched.status).toBe(200);
      const response = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
      expect(response.headers.get('x-ratelimit-limit')).toBe('20');
    });

    it('one account being limited does not limit another', async () => {
      const noisy = await createAccount(api, { plan: 'free' });
      const quiet = await createAccount(api, { plan: 'free' });
      const responses = await inOneWindow(async () => {
        const flood = await Promise.all(
          Array.from({ length: FREE_LIMIT + 3 }, () => call(api, 'GET', '/v1/account/credits', { key: noisy.apiKey })),
        );
        return [...flood, await call(api, 'GET', '/v1/account/credits', { key: quiet.apiKey })];
      });
      expect(responses.slice(0, -1).filter((response) => response.status === 429)).toHaveLength(3);
      expect(responses[responses.length - 1].status).toBe(200);
    });

    it('the limit holds across two API instances sharing Redis', async () => {
      const account = await createAccount(api, { plan: 'free' });
      const responses = await inOneWindow(() =>
        Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            call(i % 2 === 0 ? api : second, 'GET', '/v1/account/credits', { key: account.apiKey }),
          ),
        ),
      );
      const accepted = responses.filter((response) => response.status === 200);
      const limited = responses.filter((response) => response.status === 429);
      expect(accepted).toHaveLength(FREE_LIMIT);
      expect(limited).toHaveLength(12 - FREE_LIMIT);
      // Private per-instance counters would have accepted 5 on each instance (10 in all).
      for (const response of limited) expect(response.body.error.code).toBe('rate_limit_exceeded');
    });
  });

  describe('per IP, for unauthenticated traffic', () => {
    let strict: TestApi;
    beforeAll(async () => {
      strict = await startApi({ IP_RATE_LIMIT: '3' });
    });
    afterAll(() => strict.close());

    it('requests without a valid key are limited per IP (IP_RATE_LIMIT), with the same 429 envelope', async () => {
      const responses = await inOneWindow(async () => {
        const seen: JsonResponse[] = [];
        seen.push(await call(strict, 'GET', '/v1/account/credits'));
        seen.push(await call(strict, 'GET', '/v1/account/credits', { key: `mjk_${'Z'.repeat(40)}` }));
        seen.push(await call(strict, 'GET', '/v1/account/credits', { key: 'garbage' }));
        seen.push(await call(strict, 'GET', '/v1/account/credits'));
        seen.push(await call(strict, 'GET', '/v1/account/credits', { key: `mjk_${'Y'.repeat(40)}` }));
        return seen;
      });
      expect(responses.map((response) => response.status)).toEqual([401, 401, 401, 429, 429]);
      expect(responses.slice(0, 3).map((response) => response.body.error.code)).toEqual([
        'missing_api_key',
        'invalid_api_key',
        'invalid_api_key',
      ]);
      const limited = responses[3];
      expectError(strict, limited, 'rate_limit_exceeded');
      expect(limited.body.error.details).toEqual({
        limit: 3,
        window_seconds: 1,
        retry_after_seconds: expect.any(Number),
      });
      expect(limited.headers.get('retry-after')).toBe(String(limited.body.error.details.retry_after_seconds));
    });

    it('a valid key is limited by its account, not by the IP: its own requests never spend the IP budget', async () => {
      const account = await createAccount(strict, { plan: 'pro' });
      const responses = await inOneWindow(async () => {
        const seen: JsonResponse[] = [];
        for (let i = 0; i < 6; i++)
          seen.push(await call(strict, 'GET', '/v1/account/credits', { key: account.apiKey }));
        for (let i = 0; i < 4; i++) seen.push(await call(strict, 'GET', '/v1/account/credits'));
        return seen;
      });
      expect(responses.slice(0, 6).map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(responses[0].headers.get('x-ratelimit-limit')).toBe('100');
      expect(responses.slice(6).map((response) => response.status)).toEqual([401, 401, 401, 429]);
    });

    // The queue board (/admin/queues) takes the operator token too: in a header, or posted to its sign-in
    // form. Guesses there spend the same budget, and once it is spent the right token is refused there
    // as well — the board must not be a side door around the failed-credential budget.
    it('guesses of the operator token at the queue board spend the same budget, and the board then refuses the right token', async () => {
      const right = strict.config.adminToken!;
      const form = (token: string) =>
        fetch(`${strict.url}/admin/queues/session`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        });
      const statuses = await inOneWindow(async () => {
        const seen: JsonResponse[] = [];
        seen.push(await call(strict, 'GET', '/admin/queues/api/queues', { headers: { 'x-admin-token': 'guess-1' } }));
        const posted = await form('guess-2');
        seen.push({ status: posted.status, headers: posted.headers, body: null });
        seen.push(await call(strict, 'GET', '/admin/queues/api/queues', { headers: { 'x-admin-token': 'guess-3' } }));
        const rightForm = await form(right);
        seen.push({ status: rightForm.status, headers: rightForm.headers, body: null });
        seen.push(await call(strict, 'GET', '/admin/queues/api/queues', { headers: { 'x-admin-token': right } }));
        seen.push(await call(strict, 'GET', '/v1/admin/accounts', { headers: { 'x-admin-token': right } }));
        return seen;
      });
      expect(statuses.map((response) => response.status)).toEqual([401, 401, 401, 429, 429, 429]);
      expect(statuses[4].body.error).toMatchObject({ code: 'rate_limit_exceeded' });
      await alignToSecond();
      expect((await form(right)).status).toBe(303);
    });

    // Issue 12 item 6: the budget is checked before any credential is verified, so it is no oracle.
    it('once the IP has spent its failed-credential budget, the right key and the right operator token get 429 too, until the window passes', async () => {
      const account = await createAccount(strict, { plan: 'pro' });
      const adminToken = { 'x-admin-token': strict.config.adminToken! };
      const responses = await inOneWindow(async () => {
        const seen: JsonResponse[] = [];
        for (let i = 0; i < 3; i++) {
          seen.push(await call(strict, 'GET', '/v1/account/credits', { key: `mjk_${String(i).repeat(40)}` }));
        }
        seen.push(await call(strict, 'GET', '/v1/account/credits', { key: account.apiKey }));
        seen.push(await call(strict, 'GET', `/v1/admin/accounts/${account.accountId}`, { headers: adminToken }));
        seen.push(await call(strict, 'GET', '/v1/account/credits', { key: `mjk_${'W'.repeat(40)}` }));
        return seen;
      });
      expect(responses.map((response) => response.status)).toEqual([401, 401, 401, 429, 429, 429]);
      for (const limited of responses.slice(3)) {
        expectError(strict, limited, 'rate_limit_exceeded');
        expect(limited.body.error.details).toEqual({
          limit: 3,
          window_seconds: 1,
          retry_after_seconds: expect.any(Number),
        });
        expect(limited.headers.get('retry-after')).toBe(String(limited.body.error.details.retry_after_seconds));
      }
      await alignToSecond();
      expect((await call(strict, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
      expect(
        (await call(strict, 'GET', `/v1/admin/accounts/${account.accountId}`, { headers: adminToken })).status,
      ).toBe(200);
    });

    it('a flood of parallel operator-token guesses: the right token sent after it is refused like the guesses', async () => {
      const account = await createAccount(strict, { plan: 'pro' });
      const right = { 'x-admin-token': strict.config.adminToken! };
      const responses = await inOneWindow(async () => {
        const guesses = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            call(strict, 'GET', '/v1/admin/accounts', { headers: { 'x-admin-token': `guess-${i}-0123456789abcdef` } }),
          ),
        );
        return [...guesses, await call(strict, 'GET', `/v1/admin/accounts/${account.accountId}`, { headers: right })];
      });
      // Each guess takes its place in the budget before the token is compared, so however many arrive at
      // the same instant, only IP_RATE_LIMIT (3) of them are ever compared: the rest are 429 unseen.
      expect(responses.filter((response) => response.status === 401)).toHaveLength(3);
      expect(responses.slice(0, 50).filter((response) => response.status === 429)).toHaveLength(47);
      expect(responses.at(-1)!.status).toBe(429);
      expectError(strict, responses.at(-1)!, 'rate_limit_exceeded');
    });

    // Issue 36 item 6: authentication and the rate limits come before the body is read (§2 puts 401 and 429
    // ahead of 400), so a body nobody may send is never parsed, and a flood of them is throttled.
    describe('before the body is read', () => {
      const malformed = (key?: string) =>
        call(strict, 'POST', '/v1/sdr2hdr/jobs', {
          key,
          rawBody: '{bad',
          headers: { 'content-type': 'application/json' },
        });

      it('a malformed body without a key → 401 missing_api_key, not 400 invalid_json', async () => {
        await alignToSecond();
        const response = await malformed();
        expectError(strict, response, 'missing_api_key', 'X-API-Key');
        expect(response.status).toBe(401);
      });

      it('a burst of 100 malformed bodies without a key → 401s, then 429 with Retry-After; never 400', async () => {
        await alignToSecond();
        const responses = await Promise.all(Array.from({ length: 100 }, () => malformed()));
        const statuses = responses.map((response) => response.status);
        expect(statuses.filter((status) => status === 400)).toHaveLength(0);
        // Parallel guesses may all pass the budget's check before any is counted (CredentialAttempts), so
        // how many get their 401 first depends on timing; once counted, the rest are 429.
        const limited = responses.filter((response) => response.status === 429);
        expect(limited.length).toBeGreaterThan(0);
        expectError(strict, limited[0], 'rate_limit_exceeded');
        expect(limited[0].headers.get('retry-after')).toBe(String(limited[0].body.error.details.retry_after_seconds));
        expect(statuses.filter((status) => status !== 429).every((status) => status === 401)).toBe(true);
      });

      it('with a valid key, a malformed body is still 400 invalid_json, and a burst of them meets the plan rate', async () => {
        await alignToSecond();
        const account = await createAccount(strict, { plan: 'free' });
        const responses = await inOneWindow(() =>
          Promise.all(Array.from({ length: FREE_LIMIT + 5 }, () => malformed(account.apiKey))),
        );
        const statuses = responses.map((response) => response.status).sort();
        expect(statuses).toEqual([...Array(FREE_LIMIT).fill(400), ...Array(5).fill(429)]);
        const refused = responses.find((response) => response.status === 400)!;
        expectError(strict, refused, 'invalid_json');
        const limited = responses.find((response) => response.status === 429)!;
        expectError(strict, limited, 'rate_limit_exceeded');
        expect(limited.headers.get('retry-after')).toBe(String(limited.body.error.details.retry_after_seconds));
      });
    });

    it('wrong operator tokens count against the IP too', async () => {
      const responses = await inOneWindow(async () => {
        const seen: JsonResponse[] = [];
        for (let i = 0; i < 4; i++) {
          seen.push(
            await call(strict, 'GET', '/v1/admin/accounts', { headers: { 'x-admin-token': 'wrong-token-0123456789' } }),
          );
        }
        return seen;
      });
      expect(responses.map((response) => response.status)).toEqual([401, 401, 401, 429]);
      expectError(strict, responses[3], 'rate_limit_exceeded');
    });
  });
});
