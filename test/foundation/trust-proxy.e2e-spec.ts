// Behind a reverse proxy (production has one: the app speaks no TLS) every client reaches the API from
// the proxy's address. TRUST_PROXY names the proxies whose X-Forwarded-For is believed; the client
// address it yields is what every per-IP limit counts and what the loopback-only rule of /metrics
// judges. Tested through a real proxy process (test/support/forwarding-proxy.js, node-http-proxy):
//
//   client A 127.0.0.2 ─┐
//   client B 127.0.0.3 ─┼─► proxy ─(from 127.0.0.1)─► API      TRUST_PROXY=127.0.0.1,127.0.0.4
//   "CDN"    127.0.0.4 ─┘  (passes on its own client's X-Forwarded-For, e.g. 203.0.113.9)
import { generateKeyPairSync } from 'node:crypto';
import { parseConfig } from '../../src/common/config/config';
import { createAccount, startApi, type TestApi } from '../support/app';
import { requestFrom, startForwardingProxy, type ForwardingProxy } from '../support/forwarding-proxy';

const CLIENT_A = '127.0.0.2';
const CLIENT_B = '127.0.0.3';
const CDN = '127.0.0.4';
const IP_LIMIT = 5;

function productionEnv(): Record<string, string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return {
    NODE_ENV: 'production',
    ALLOW_PRIVATE_URLS: '', // the test default (port-less loopback) is refused in production
    ASSET_URL_SECRET: 'trust-proxy-test-asset-secret',
    LICENSE_SIGNING_KEY: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    METRICS_TOKEN: '',
  };
}

describe('TRUST_PROXY: the client address behind a reverse proxy', () => {
  let api: TestApi;
  let proxy: ForwardingProxy;

  beforeAll(async () => {
    api = await startApi({ ...productionEnv(), TRUST_PROXY: `127.0.0.1, ${CDN}`, IP_RATE_LIMIT: String(IP_LIMIT) });
    proxy = await startForwardingProxy(api.url);
  });
  afterAll(async () => {
    await proxy?.stop();
    await api?.close();
  });

  it("one client's wrong keys spend its own failed-credential budget, not every client's; a forged X-Forwarded-For does not escape it", async () => {
    const { apiKey } = await createAccount(api, { plan: 'pro' });
    const seenByB: number[] = [];
    for (let round = 0; round < 3; round++) {
      // Client A guesses keys (claiming other addresses in its own X-Forwarded-For) until it is refused.
      let refusedA = false;
      for (let guess = 0; guess < IP_LIMIT * 4 && !refusedA; guess++) {
        const response = await requestFrom(CLIENT_A, `${proxy.url}/v1/account/credits`, {
          headers: { 'x-api-key': `mjk_${'x'.repeat(32)}`, 'x-forwarded-for': `198.51.100.${guess}` },
        });
        refusedA = response.status === 429;
        if (!refusedA) expect(response.status).toBe(401);
      }
      expect(refusedA).toBe(true);
      // At once, client B's valid key, through the same proxy.
      const b = await requestFrom(CLIENT_B, `${proxy.url}/v1/account/credits`, { headers: { 'x-api-key': apiKey } });
      seenByB.push(b.status);
    }
    expect(seenByB).toEqual([200, 200, 200]);
  });

  it('/metrics answers loopback clients only: a client beyond the proxy gets 404, as if it did not exist', async () => {
    const direct = await requestFrom('127.0.0.1', `${api.url}/metrics`);
    expect(direct.status).toBe(200);
    const proxiedLoopbackClient = await requestFrom(CLIENT_A, `${proxy.url}/metrics`);
    expect(proxiedLoopbackClient.status).toBe(200);

    const internetClient = await requestFrom(CDN, `${proxy.url}/metrics`, {
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    expect(internetClient.status).toBe(404);
    expect(internetClient.body.error.code).toBe('route_not_found');
  });

  it('without TRUST_PROXY (the default) X-Forwarded-For is believed from no one', async () => {
    expect(parseConfig({ ...process.env, TRUST_PROXY: '' }).trustProxy).toEqual([]);
    expect(() => parseConfig({ ...process.env, TRUST_PROXY: '127.0.0.1,not-an-address' })).toThrow(
      /^TRUST_PROXY must list proxy addresses or CIDRs .*"not-an-address"/,
    );
    const plain = await startApi({ ...productionEnv(), IP_RATE_LIMIT: String(IP_LIMIT) });
    try {
      // A direct client cannot claim to be someone else: its forged header is ignored, its own budget spent.
      const statuses: number[] = [];
      for (let guess = 0; guess < IP_LIMIT * 4 && !statuses.includes(429); guess++) {
        const response = await requestFrom(CLIENT_A, `${plain.url}/v1/account/credits`, {
          headers: { 'x-api-key': `mjk_${'y'.repeat(32)}`, 'x-forwarded-for': `198.51.100.${guess}` },
        });
        statuses.push(response.status);
      }
      expect(statuses).toContain(429);
      // A request forwarded by a proxy the API was not told about is not a loopback client's.
      const forwarded = await requestFrom('127.0.0.1', `${plain.url}/metrics`, {
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      expect(forwarded.status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
