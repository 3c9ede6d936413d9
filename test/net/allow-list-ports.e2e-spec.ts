// ALLOW_PRIVATE_URLS entries that name a port (issue 29, "Also"): `127.0.0.1:<port>` lets a source URL and a
// webhook reach that one loopback service, not Redis, PostgreSQL or anything else on the same host — every
// other port is refused as invalid_url before anything connects. In production a loopback entry must name
// its port (a bare `127.0.0.1` would open every service of the host).
import { Redis } from 'ioredis';
import { checkConfigNames, parseConfig } from '../../src/common/config/config';
import { workersKey } from '../../src/queues/keys';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';
import { sdrMp4 } from '../fixtures/media';
import { readFile } from 'node:fs/promises';
import { startOrigin, type LocalOrigin } from './local-origin';
import { loopbackHostName } from '../support/loopback-names';

describe('ALLOW_PRIVATE_URLS with ports', () => {
  let api: TestApi;
  let allowed: LocalOrigin;
  let other: LocalOrigin;

  beforeAll(async () => {
    const clip = await readFile(await sdrMp4({ width: 320, height: 180, seconds: 1 }));
    const serve = (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': clip.length });
      res.end(clip);
    };
    allowed = await startOrigin(serve);
    // Same host, another port: stands for Redis or PostgreSQL, and counts what reaches it.
    other = await startOrigin(serve);
    api = await startApi({
      REGION: 'allow-ports',
      ALLOW_PRIVATE_URLS: `127.0.0.1:${allowed.port},[::1]:${allowed.port}`,
    });
    // A live worker in the region (a heartbeat an hour ahead), so the estimate gets past the region check.
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(workersKey(api.config, 'allow-ports'), Date.now() + 3600_000, 'test-worker');
    redis.disconnect();
  });
  afterAll(async () => {
    await api?.close();
    await allowed?.close();
    await other?.close();
  });

  it('a source on the allowed port is read; the same host on any other port is invalid_url, never connected to', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 100 });
    const estimate = (url: string) =>
      call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', { key: account.apiKey, body: { inputs: [{ source_url: url }] } });
    const good = await estimate(`${allowed.base}/clip.mp4`);
    expect(good.status).toBe(200);
    expect(good.body.items[0]).toMatchObject({ width: 320, height: 180 });
    expect(allowed.requests.length).toBeGreaterThan(0);

    for (const url of [
      `${other.base}/clip.mp4`,
      `http://127.0.0.1:${api.config.port}/health/live`,
      'http://127.0.0.1:6379/',
      'http://127.0.0.1:5432/',
      'http://127.0.0.1/clip.mp4', // port 80
      'https://127.0.0.1/clip.mp4', // port 443
      `http://127.0.0.2:${allowed.port}/clip.mp4`, // another loopback address, same port
    ]) {
      expectError(api, await estimate(url), 'invalid_url', 'inputs[0].source_url');
      expectError(
        api,
        await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: { inputs: [{ source_url: url }] } }),
        'invalid_url',
        'inputs[0].source_url',
      );
    }
    expect(other.requests).toEqual([]);
  });

  it('webhook URLs follow the same rule', async () => {
    const account = await createAccount(api, { plan: 'pro' });
    const register = (url: string) =>
      call(api, 'POST', '/v1/webhook-endpoints', { key: account.apiKey, body: { url } });
    expect((await register(`http://127.0.0.1:${allowed.port}/hook`)).status).toBe(201);
    expect((await register(`http://[::1]:${allowed.port}/hook`)).status).toBe(201);
    for (const url of [`http://127.0.0.1:${other.port}/hook`, 'http://127.0.0.1:6379/', 'http://[::1]:5432/'])
      expectError(api, await register(url), 'invalid_url', 'url');
  });

  it('entries: host:port, [v6]:port, name:port, CIDRs and bare hosts parse; a bad port stops start-up', () => {
    const base = { ...process.env };
    expect(() =>
      parseConfig({ ...base, ALLOW_PRIVATE_URLS: '127.0.0.1:8080,[::1]:8080,media.internal:8443,10.1.0.0/16,::1' }),
    ).not.toThrow();
    for (const bad of ['127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1:http', '[::1]:', 'media.internal:'])
      expect(() => parseConfig({ ...base, ALLOW_PRIVATE_URLS: bad })).toThrow(/ALLOW_PRIVATE_URLS/);
  });

  it('in production, a loopback entry without a port stops start-up with a clear message', () => {
    const production = {
      ...process.env,
      NODE_ENV: 'production',
      ASSET_URL_SECRET: 'allow-list-ports-asset-secret',
      ADMIN_TOKEN: 'allow-list-ports-admin-token',
    };
    for (const bare of ['127.0.0.1', '::1', '127.0.0.0/8', 'localhost', '0.0.0.0/0'])
      expect(() => parseConfig({ ...production, ALLOW_PRIVATE_URLS: bare })).toThrow(/ALLOW_PRIVATE_URLS.*port/);
    expect(() => parseConfig({ ...production, ALLOW_PRIVATE_URLS: '127.0.0.1:8080,10.1.0.0/16' })).not.toThrow();
  });

  it('in production, a port-less name that resolves to loopback stops start-up like 127.0.0.1; with a port it stays', async () => {
    const production = {
      ...process.env,
      NODE_ENV: 'production',
      ASSET_URL_SECRET: 'allow-list-ports-asset-secret',
      ADMIN_TOKEN: 'allow-list-ports-admin-token',
    };
    // `vm` (the host's own name in /etc/hosts) or `ip6-localhost`: nothing in the text says loopback.
    const name = loopbackHostName();
    await expect(
      checkConfigNames(parseConfig({ ...production, ALLOW_PRIVATE_URLS: `10.1.0.0/16,${name}` })),
    ).rejects.toThrow(new RegExp(`^ALLOW_PRIVATE_URLS: "${name}" resolves to this host.*name the port`));
    await expect(
      checkConfigNames(parseConfig({ ...production, ALLOW_PRIVATE_URLS: `${name}:8080,10.1.0.0/16` })),
    ).resolves.toBeUndefined();
    // A name that does not resolve reaches nothing (.invalid never resolves, RFC 6761); outside production names are not checked.
    await expect(
      checkConfigNames(parseConfig({ ...production, ALLOW_PRIVATE_URLS: 'media.invalid' })),
    ).resolves.toBeUndefined();
    await expect(checkConfigNames(parseConfig({ ...process.env, ALLOW_PRIVATE_URLS: name }))).resolves.toBeUndefined();
  });
});
