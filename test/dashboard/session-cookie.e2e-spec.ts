// The session cookie cannot be shadowed: a request carrying two session cookies (a same-site host can
// plant one beside the real one) is refused, and in production (https) the cookie is `__Host-` prefixed —
// the browser accepts it only from this very host, Secure, Path=/, no Domain — and a plain `mj_session`
// counts for nothing there.
import { generateKeyPairSync } from 'node:crypto';
import { call, startApi, type TestApi } from '../support/app';
import { PASSWORD, redeem, uniqueEmail } from '../support/dashboard-session';

describe('the session cookie', () => {
  it('two session cookies in one request are 400 invalid_parameter (param Cookie), whichever comes first', async () => {
    const api = await startApi();
    try {
      const created = await call(api, 'POST', '/v1/admin/accounts', {
        admin: true,
        body: { name: 'Cookie Co', plan: 'pro', owner_email: uniqueEmail('cookie') },
      });
      const session = await redeem(api, created.body.owner_invite_url, PASSWORD);
      const planted = `mj_session=${'A'.repeat(43)}`;
      expect((await call(api, 'GET', '/v1/sessions/current', { headers: { cookie: session.cookie } })).status).toBe(
        200,
      );
      for (const cookie of [`${session.cookie}; ${planted}`, `${planted}; ${session.cookie}`]) {
        const refused = await call(api, 'GET', '/v1/sessions/current', { headers: { cookie } });
        expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([
          400,
          'invalid_parameter',
          'Cookie',
        ]);
      }
    } finally {
      await api.close();
    }
  });

  describe('in production over https', () => {
    let api: TestApi;
    const origin = 'https://app.mediajobs.example';

    beforeAll(async () => {
      const { privateKey } = generateKeyPairSync('ed25519');
      api = await startApi({
        NODE_ENV: 'production',
        ALLOW_PRIVATE_URLS: '', // the test default (port-less loopback) is refused in production
        PUBLIC_BASE_URL: origin,
        ASSET_URL_SECRET: 'session-cookie-asset-secret',
        LICENSE_SIGNING_KEY: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      });
    });
    afterAll(async () => {
      await api?.close();
    });

    it('is __Host-mj_session (Secure, Path=/, no Domain); a plain mj_session is not a session there', async () => {
      const created = await call(api, 'POST', '/v1/admin/accounts', {
        admin: true,
        body: { name: 'Host Co', plan: 'pro', owner_email: uniqueEmail('host') },
      });
      const token = new URL(created.body.owner_invite_url).hash.replace(/^#token=/, '');
      const redeemed = await call(api, 'POST', '/v1/password-links/redeem', {
        body: { token, password: PASSWORD },
        headers: { origin },
      });
      expect(redeemed.status).toBe(201);
      const setCookie = redeemed.headers.get('set-cookie') ?? '';
      const [pair, ...attributes] = setCookie.split('; ');
      expect(pair).toMatch(/^__Host-mj_session=[A-Za-z0-9_-]{43}$/);
      expect(attributes).toEqual(expect.arrayContaining(['Secure', 'Path=/', 'HttpOnly']));
      expect(attributes.some((attribute) => /^Domain=/i.test(attribute))).toBe(false);
      const value = pair.slice(pair.indexOf('=') + 1);

      expect((await call(api, 'GET', '/v1/sessions/current', { headers: { cookie: pair } })).status).toBe(200);
      const plain = await call(api, 'GET', '/v1/sessions/current', { headers: { cookie: `mj_session=${value}` } });
      expect([plain.status, plain.body.error.code]).toEqual([401, 'invalid_session']);
      // A plain cookie beside the real one is not a second session cookie: it is ignored.
      const beside = await call(api, 'GET', '/v1/sessions/current', {
        headers: { cookie: `mj_session=${'B'.repeat(43)}; ${pair}` },
      });
      expect(beside.status).toBe(200);
    });
  });
});
