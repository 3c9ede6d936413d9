// A pause of the API's own event loop (a long garbage collection, a starved CPU) is not Redis being
// unavailable. The API's Redis client gives up on a command after 1 s so that a Redis that stops
// answering turns into a quick 503 (test/foundation/outage.e2e-spec.ts); but when the process itself
// stalls past that second, Node runs the expired timer before it reads the reply already waiting on the
// socket, and a healthy request was answered 503 service_unavailable. Seen in full test runs (the API
// runs inside Jest's process there, whose heap grows to gigabytes): job reads polled by waitForJob got
// 503 in two suites of one run, never alone. That a Redis which stops answering still gets its quick 503
// is test/foundation/outage.e2e-spec.ts's "stops answering".
import type { Redis } from 'ioredis';
import { REDIS } from '../../src/common/redis/redis.module';
import { call, createAccount, startApi, type TestApi } from '../support/app';

/** Blocks this process (the API's event loop with it) for `ms`, as a long collection would. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: nothing else runs
  }
}

describe('an event-loop stall in the API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
  });

  /**
   * Stalls the process once for 1.5 s on the rate limiter's next script (its failure is the request's
   * 503; the credential cache's reads fall back to PostgreSQL) — `when` the script is handed to the
   * client (before its pipeline writes it) or once it is written — while Redis answers at once. Three
   * reads are under way; the connections they need are open already (a connection still being opened
   * has its own 2 s timeout, which a stall also outlasts — not this test's subject).
   */
  async function creditsReadsWithStalls(when: 'before the write' | 'after the write'): Promise<number[]> {
    const account = await createAccount(api);
    const redis = api.app.get<Redis>(REDIS);
    const send = redis.sendCommand.bind(redis);
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).status).toBe(200);
    let stalls = 0;
    redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
      const sent = send(...args);
      if (stalls < 1 && args[0].name.startsWith('eval')) {
        stalls++;
        if (when === 'before the write') stall(1500);
        else queueMicrotask(() => stall(1500));
      }
      return sent;
    }) as Redis['sendCommand'];
    try {
      const responses = await Promise.all(
        [0, 1, 2].map(() => call(api, 'GET', '/v1/account/credits', { key: account.apiKey })),
      );
      expect(stalls).toBe(1);
      return responses.map((response) => response.status);
    } finally {
      redis.sendCommand = send;
    }
  }

  it('does not turn a Redis reply that arrived during the stall into 503 service_unavailable', async () => {
    expect(await creditsReadsWithStalls('after the write')).toEqual([200, 200, 200]);
  });

  it('gives a command stalled before it was even written its whole timeout once the process runs again', async () => {
    expect(await creditsReadsWithStalls('before the write')).toEqual([200, 200, 200]);
  });
});
