// Issue 12 item 20: offline_grace_expired is retryable in the specification's SDK column, and the
// official client retries it — by validating online and retrying with the fresh token, since the same
// request with the same token fails again. Against the real service, through a recording proxy; the
// errors page says how.
import { rmSync } from 'node:fs';
import { startApi, type TestApi } from '../support/app';
import { issueLicense } from '../support/licenses';
import { buildSdk, loadSdk, RecordingProxy, type Sdk } from './support';

describe('the official client retries offline_grace_expired', () => {
  let sdkDir: string;
  let sdk: Sdk;
  let proxy: RecordingProxy;
  let api: TestApi;

  beforeAll(async () => {
    sdkDir = buildSdk();
    sdk = loadSdk(sdkDir);
    proxy = await RecordingProxy.start();
    api = await startApi({ IP_RATE_LIMIT: '1000', LICENSE_RATE_LIMIT: '100' });
    proxy.target = api.url;
  });
  afterAll(async () => {
    await api?.close();
    await proxy?.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  /** A licence with a one-second offline grace, activated; returns a token whose grace has passed. */
  async function expiredToken() {
    const license = await issueLicense(api, { graceSeconds: 1 });
    const client = new sdk.MediaJobs({ baseUrl: proxy.url });
    const activation = await client.license.activate({ license_key: license.key, device_id: 'studio-1' });
    await new Promise((resolve) => setTimeout(resolve, 2100));
    return { license, client, token: activation.token };
  }

  it('license.retrieve with revalidate: validates online once, hands over the fresh token, retries and succeeds', async () => {
    const { license, client, token } = await expiredToken();
    const renewed: string[] = [];
    const started = proxy.exchanges.length;
    const { data, response } = await client.license
      .retrieve(token, {
        revalidate: {
          license_key: license.key,
          device_id: 'studio-1',
          onValidated: (activation) => renewed.push(activation.token),
        },
      })
      .withResponse();
    expect(data).toMatchObject({ object: 'license', id: license.id });
    expect(renewed).toHaveLength(1);
    expect(renewed[0]).not.toBe(token);
    expect(response.retries).toBe(1);
    const calls = proxy.exchanges
      .slice(started)
      .map((exchange) => `${exchange.method} ${exchange.path} ${exchange.status}`);
    expect(calls).toEqual(['GET /v1/license 403', 'POST /v1/license/validate 200', 'GET /v1/license 200']);
  });

  it('without the licence key it cannot renew the token: LicenseError offline_grace_expired, retryable, raised', async () => {
    const { client, token } = await expiredToken();
    const error = await client.license.retrieve(token).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(sdk.LicenseError);
    expect(error).toMatchObject({ code: 'offline_grace_expired', retryable: true });
  });

  it('the SDK exports the retry row, and the errors page says the client validates online and retries', async () => {
    expect(sdk.RETRY_CAPS.offlineGraceExpired).toBe(1);
    expect(sdk.OFFLINE_GRACE_EXPIRED).toBe('offline_grace_expired');
    const page = await (await fetch(`${api.url}/docs/errors.html`)).text();
    const section = page.slice(page.indexOf('id="offline_grace_expired"'));
    // The customer page's "Retry" row (it was "Retryable" before the page was written for customers).
    const retry = /<dt>Retry<\/dt><dd>(.*?)<\/dd>/.exec(section)?.[1];
    expect(retry).toContain('after validating online');
    expect(retry).toContain('retries once with the fresh token');
  });
});
