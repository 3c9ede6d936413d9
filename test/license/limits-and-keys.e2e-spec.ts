// Guessing protection of the licence API (per licence key and per IP, 429 envelope with Retry-After)
// and the signing key: from LICENSE_SIGNING_KEY, shared by every instance, required in production.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { spawn } from 'node:child_process';
import { call, freePort, startApi, type JsonResponse, type TestApi } from '../support/app';
import { ensureBuilt, ROOT } from '../support/dist-build';
import { alignToSecond, expectError, waitUntil } from '../support/error-checks';
import { activate, entitlements, issueLicense } from '../support/licenses';

/** Runs `fire` inside one 1-second rate-limit window (again when the window rolled over mid-burst). */
async function inOneWindow(fire: () => Promise<JsonResponse[]>): Promise<JsonResponse[]> {
  for (let attempt = 0; attempt < 4; attempt++) {
    await alignToSecond();
    const window = Math.floor(Date.now() / 1000);
    const responses = await fire();
    if (Math.floor(Date.now() / 1000) === window) return responses;
  }
  throw new Error('could not fit the burst in one 1-second window in 4 attempts');
}

function expectRateLimited(api: TestApi, response: JsonResponse, limit: number): void {
  expectError(api, response, 'rate_limit_exceeded');
  expect(response.status).toBe(429);
  expect(response.body.error.retryable).toBe(true);
  expect(response.body.error.details).toEqual({ limit, window_seconds: 1, retry_after_seconds: expect.any(Number) });
  expect(response.headers.get('retry-after')).toBe(String(response.body.error.details.retry_after_seconds));
}

describe('licence API limits', () => {
  describe('per licence key', () => {
    let api: TestApi;
    beforeAll(async () => {
      api = await startApi({ IP_RATE_LIMIT: '1000', LICENSE_RATE_LIMIT: '3' });
    });
    afterAll(() => api.close());

    it('a 4th call with one key in a second → 429 rate_limit_exceeded; another key from the same IP still passes', async () => {
      const hammered = await issueLicense(api, { maxDevices: 10 });
      const other = await issueLicense(api);
      const responses = await inOneWindow(() =>
        Promise.all([
          ...Array.from({ length: 6 }, (_, index) => activate(api, hammered.key, `device-${index}`)),
          activate(api, other.key, 'device-x'),
        ]),
      );
      const forHammered = responses.slice(0, 6);
      expect(forHammered.filter((response) => response.status === 200)).toHaveLength(3);
      const limited = forHammered.filter((response) => response.status === 429);
      expect(limited).toHaveLength(3);
      for (const response of limited) expectRateLimited(api, response, 3);
      expect(responses[6].status).toBe(200);
    });

    it('guesses of one unknown key are limited too (before any lookup)', async () => {
      const guess = `mjl_${'A1'.repeat(20)}`;
      const responses = await inOneWindow(() =>
        Promise.all(Array.from({ length: 5 }, () => activate(api, guess, 'device'))),
      );
      expect(responses.filter((response) => response.body.error.code === 'license_invalid')).toHaveLength(3);
      for (const response of responses.filter((r) => r.status === 429)) expectRateLimited(api, response, 3);
    });

    it('token reads are limited per licence', async () => {
      const license = await issueLicense(api);
      const token = (await activate(api, license.key, 'device')).body.token;
      const responses = await inOneWindow(() => Promise.all(Array.from({ length: 5 }, () => entitlements(api, token))));
      expect(responses.filter((response) => response.status === 200)).toHaveLength(3);
      for (const response of responses.filter((r) => r.status === 429)) expectRateLimited(api, response, 3);
    });
  });

  describe('per IP (the guard, for every public route)', () => {
    let api: TestApi;
    beforeAll(async () => {
      api = await startApi({ IP_RATE_LIMIT: '2', LICENSE_RATE_LIMIT: '100' });
    });
    afterAll(() => api.close());

    it('a burst of different keys from one address → 429 after the IP limit', async () => {
      const responses = await inOneWindow(() =>
        Promise.all(Array.from({ length: 5 }, (_, index) => activate(api, `mjl_${String(index).repeat(40)}`, 'd'))),
      );
      expect(responses.filter((response) => response.status === 403)).toHaveLength(2);
      for (const response of responses.filter((r) => r.status === 429)) expectRateLimited(api, response, 2);
    });
  });
});

describe('licence signing key', () => {
  const pkcs8 = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
    key.export({ format: 'der', type: 'pkcs8' }).toString('base64');

  it('LICENSE_SIGNING_KEY is used: the published JWK is its public half, and two instances accept each other’s tokens', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const env = { IP_RATE_LIMIT: '1000', LICENSE_SIGNING_KEY: pkcs8(privateKey) };
    const [first, second] = await Promise.all([startApi(env), startApi(env)]);
    try {
      const jwk = (await call(first, 'GET', '/v1/license/public-key')).body;
      expect(jwk.x).toBe(publicKey.export({ format: 'jwk' }).x);
      expect((await call(second, 'GET', '/v1/license/public-key')).body).toEqual(jwk);
      const license = await issueLicense(first);
      const token = (await activate(first, license.key, 'machine-a')).body.token;
      expect((await entitlements(second, token)).status).toBe(200);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('without LICENSE_SIGNING_KEY (tests, local runs) each instance has its own key; its tokens fail elsewhere', async () => {
    const [first, second] = await Promise.all([
      startApi({ IP_RATE_LIMIT: '1000', LICENSE_SIGNING_KEY: '' }),
      startApi({ IP_RATE_LIMIT: '1000', LICENSE_SIGNING_KEY: '' }),
    ]);
    try {
      const [a, b] = await Promise.all([
        call(first, 'GET', '/v1/license/public-key'),
        call(second, 'GET', '/v1/license/public-key'),
      ]);
      expect(a.body.x).not.toBe(b.body.x);
      expect(() => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: a.body.x }, format: 'jwk' })).not.toThrow();
      const license = await issueLicense(first);
      const token = (await activate(first, license.key, 'machine-a')).body.token;
      expectError(second, await entitlements(second, token), 'license_invalid', 'X-License-Token');
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  describe('the built API as a process (dist/src/main.js)', () => {
    let main = '';
    beforeAll(() => {
      main = ensureBuilt('dist/src/main.js');
    }, 180_000);

    /** Runs the API until it listens (then stops it) or exits by itself; returns its output. */
    async function runApi(
      env: Record<string, string>,
    ): Promise<{ code: number | null; output: string; publicKey?: any }> {
      const port = await freePort();
      const child = spawn(process.execPath, [main], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolvePromise) => child.once('exit', resolvePromise));
      try {
        await waitUntil(async () => output.includes('listening on') || child.exitCode !== null, 30_000, 50);
        if (child.exitCode !== null) return { code: child.exitCode, output };
        const publicKey = await (await fetch(`http://127.0.0.1:${port}/v1/license/public-key`)).json();
        return { code: null, output, publicKey };
      } finally {
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
      }
    }

    it('production refuses to start without LICENSE_SIGNING_KEY, saying which variable', async () => {
      const result = await runApi({
        NODE_ENV: 'production',
        ALLOW_PRIVATE_URLS: '', // the test default (port-less loopback) is refused in production
        LICENSE_SIGNING_KEY: '',
        ASSET_URL_SECRET: 'production-asset-secret-0123456789',
        LOG_LEVEL: 'info',
      });
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull();
      expect(result.output).toMatch(/LICENSE_SIGNING_KEY must be set in production/);
    }, 60_000);

    it('a configured key is used and never written to the logs', async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const secret = pkcs8(privateKey);
      const result = await runApi({ LICENSE_SIGNING_KEY: secret, LOG_LEVEL: 'trace' });
      expect(result.code).toBeNull();
      expect(result.publicKey.x).toBe(publicKey.export({ format: 'jwk' }).x);
      expect(result.output).not.toContain(secret.slice(-24));
      expect(result.output).not.toContain('LICENSE_SIGNING_KEY is not set');
    }, 60_000);
  });
});
