// The plugin licence API (docs/api-decisions.md §7, docs/spec/specification.txt §7.9) as a plugin sees it: activation with a device limit,
// Ed25519 tokens verifiable with only the public key, offline grace, and every license_error code.
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { DataSource } from 'typeorm';
import { call, startApi, type TestApi } from '../support/app';
import { expectError, sleep } from '../support/error-checks';
import {
  activate,
  activeSeats,
  deactivate,
  decodeToken,
  entitlements,
  issueLicense,
  validate,
} from '../support/licenses';

describe('plugin licences', () => {
  let api: TestApi;

  beforeAll(async () => {
    // Generous limits: the rate-limit tests below start their own instance with tight ones.
    api = await startApi({ IP_RATE_LIMIT: '1000', LICENSE_RATE_LIMIT: '100' });
  });
  afterAll(() => api.close());

  describe('activate', () => {
    it('takes a seat and returns the licence, a token and offline_grace_until', async () => {
      const license = await issueLicense(api, { maxDevices: 2, plan: 'studio' });
      const before = Date.now();
      const response = await activate(api, license.key, 'machine-a', 'Studio workstation');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        activation_id: expect.stringMatching(/^act_[0-9A-Za-z]+$/),
        device_id: 'machine-a',
        license: { id: license.id, plan: 'studio', max_devices: 2, active_devices: 1 },
        token: expect.any(String),
      });
      expect(Date.parse(response.body.license.expires_at)).toBeGreaterThan(Date.now());
      // Default grace: 7 days from now.
      const graceMs = Date.parse(response.body.offline_grace_until) - before;
      expect(graceMs).toBeGreaterThanOrEqual(7 * 86400 * 1000);
      expect(graceMs).toBeLessThan(7 * 86400 * 1000 + 5000);
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      expect(await activeSeats(api, license.id)).toBe(1);
    });

    it('re-activating an active device is not a new seat: same activation, even at the limit', async () => {
      const license = await issueLicense(api, { maxDevices: 1 });
      const first = await activate(api, license.key, 'machine-a', 'Old name');
      const again = await activate(api, license.key, 'machine-a', 'New name');
      expect(again.status).toBe(200);
      expect(again.body.activation_id).toBe(first.body.activation_id);
      expect(again.body.license.active_devices).toBe(1);
      expect(again.body.token).not.toBe('');
      const parallel = await Promise.all(Array.from({ length: 8 }, () => activate(api, license.key, 'machine-a')));
      expect(parallel.map((response) => response.status)).toEqual(Array(8).fill(200));
      expect(new Set(parallel.map((response) => response.body.activation_id))).toEqual(
        new Set([first.body.activation_id]),
      );
      expect(await activeSeats(api, license.id)).toBe(1);
      const seen = await entitlements(api, again.body.token);
      expect(seen.body.device).toMatchObject({ id: 'machine-a', name: 'New name' });
    });

    it('a new device over the limit → 403 activation_limit_reached with the counts', async () => {
      const license = await issueLicense(api, { maxDevices: 2 });
      expect((await activate(api, license.key, 'a')).status).toBe(200);
      expect((await activate(api, license.key, 'b')).status).toBe(200);
      const third = await activate(api, license.key, 'c');
      expectError(api, third, 'activation_limit_reached', 'device_id');
      expect(third.status).toBe(403);
      expect(third.body.error.details).toEqual({ max_devices: 2, active_devices: 2 });
      expect(await activeSeats(api, license.id)).toBe(2);
    });

    it('race: 20 different devices at once on 3 seats → exactly 3 activated, 17 activation_limit_reached', async () => {
      const license = await issueLicense(api, { maxDevices: 3 });
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, index) => activate(api, license.key, `racer-${index}`)),
      );
      const succeeded = responses.filter((response) => response.status === 200);
      const refused = responses.filter((response) => response.body?.error?.code === 'activation_limit_reached');
      expect(succeeded).toHaveLength(3);
      expect(refused).toHaveLength(17);
      expect(new Set(succeeded.map((response) => response.body.device_id)).size).toBe(3);
      expect(await activeSeats(api, license.id)).toBe(3);
      const admin = await call(api, 'GET', `/v1/admin/licenses/${license.id}`, { admin: true });
      expect(admin.body.active_devices).toBe(3);
    });
  });

  describe('tokens', () => {
    it('verify with only the public key from GET /v1/license/public-key (node:crypto, no server code)', async () => {
      const license = await issueLicense(api);
      const activated = await activate(api, license.key, 'machine-a');
      const jwkResponse = await call(api, 'GET', '/v1/license/public-key');
      expect(jwkResponse.status).toBe(200);
      const jwk = jwkResponse.body;
      expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      expect(jwk.d).toBeUndefined();

      const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
      const { header, claims, signingInput, signature } = decodeToken(activated.body.token);
      expect(header).toMatchObject({ alg: 'EdDSA', kid: jwk.kid });
      expect(verify(null, Buffer.from(signingInput), publicKey, signature)).toBe(true);
      expect(claims).toMatchObject({
        license_id: license.id,
        device_id: 'machine-a',
        activation_id: activated.body.activation_id,
      });
      const now = Date.now() / 1000;
      expect(Math.abs(claims.iat - now)).toBeLessThan(5);
      expect(claims.grace_until * 1000).toBe(Date.parse(activated.body.offline_grace_until));
      expect(claims.exp * 1000).toBe(Math.floor(Date.parse(activated.body.license.expires_at) / 1000) * 1000);

      // One changed byte in the claims and the same signature no longer verifies.
      const forgedClaims = Buffer.from(JSON.stringify({ ...claims, grace_until: claims.grace_until + 1 })).toString(
        'base64url',
      );
      const forgedInput = `${signingInput.split('.')[0]}.${forgedClaims}`;
      expect(verify(null, Buffer.from(forgedInput), publicKey, signature)).toBe(false);
      const forged = await entitlements(api, `${forgedInput}.${signature.toString('base64url')}`);
      expectError(api, forged, 'license_invalid', 'X-License-Token');
    });

    it('GET /v1/license with the token → the entitlements', async () => {
      const license = await issueLicense(api, { maxDevices: 5, plan: 'pro-plugin' });
      const activated = await activate(api, license.key, 'machine-a', 'Laptop');
      const response = await entitlements(api, activated.body.token);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        object: 'license',
        id: license.id,
        status: 'active',
        plan: 'pro-plugin',
        max_devices: 5,
        active_devices: 1,
        offline_grace_seconds: 604800,
        device: { id: 'machine-a', name: 'Laptop', activation_id: activated.body.activation_id },
        token: { offline_grace_until: activated.body.offline_grace_until },
      });
    });

    it('a token signed by any other key, or not a token at all → license_invalid; none → missing_parameter', async () => {
      const license = await issueLicense(api);
      const activated = await activate(api, license.key, 'machine-a');
      const { header, claims } = decodeToken(activated.body.token);
      const other = generateKeyPairSync('ed25519').privateKey;
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const input = `${encode(header)}.${encode({ ...claims, grace_until: claims.grace_until + 86400 * 365 })}`;
      const otherKey = `${input}.${sign(null, Buffer.from(input), other).toString('base64url')}`;
      expectError(api, await entitlements(api, otherKey), 'license_invalid', 'X-License-Token');
      const unsigned = `${encode({ ...header, alg: 'none' })}.${encode(claims)}.`;
      expectError(api, await entitlements(api, unsigned), 'license_invalid', 'X-License-Token');
      expectError(api, await entitlements(api, 'garbage'), 'license_invalid', 'X-License-Token');
      expectError(api, await call(api, 'GET', '/v1/license'), 'missing_parameter', 'X-License-Token');
    });

    it('grace flow: token works → past grace_until 403 offline_grace_expired (retryable) → validate → new token works', async () => {
      const license = await issueLicense(api, { graceSeconds: 1 });
      const activated = await activate(api, license.key, 'machine-a');
      expect((await entitlements(api, activated.body.token)).status).toBe(200);

      const graceUntilMs = decodeToken(activated.body.token).claims.grace_until * 1000;
      await sleep(Math.max(0, graceUntilMs - Date.now()) + 50);
      const expired = await entitlements(api, activated.body.token);
      expectError(api, expired, 'offline_grace_expired', 'X-License-Token');
      expect(expired.status).toBe(403);
      expect(expired.body.error.retryable).toBe(true);
      expect(expired.body.error.details).toEqual({ offline_grace_until: activated.body.offline_grace_until });

      const validated = await validate(api, license.key, 'machine-a');
      expect(validated.status).toBe(200);
      expect(validated.body.activation_id).toBe(activated.body.activation_id);
      expect(validated.body.token).not.toBe(activated.body.token);
      expect(Date.parse(validated.body.offline_grace_until)).toBeGreaterThan(Date.now());
      expect((await entitlements(api, validated.body.token)).status).toBe(200);
    });
  });

  describe('validate and deactivate', () => {
    it('validate → the same shape, a fresh token, and last_seen_at moves on', async () => {
      const license = await issueLicense(api);
      const activated = await activate(api, license.key, 'machine-a');
      const db = api.app.get(DataSource);
      const lastSeen = async () =>
        (
          (await db.query('SELECT last_seen_at FROM license_activations WHERE id = $1', [
            activated.body.activation_id,
          ])) as {
            last_seen_at: Date;
          }[]
        )[0].last_seen_at.getTime();
      const before = await lastSeen();
      await sleep(1100); // a token's iat is in whole seconds
      const validated = await validate(api, license.key, 'machine-a');
      expect(validated.status).toBe(200);
      expect(validated.body).toMatchObject({
        activation_id: activated.body.activation_id,
        device_id: 'machine-a',
        license: { id: license.id, max_devices: 3, active_devices: 1 },
      });
      expect(decodeToken(validated.body.token).claims.iat).toBeGreaterThan(
        decodeToken(activated.body.token).claims.iat,
      );
      expect(await lastSeen()).toBeGreaterThan(before);
    });

    it('validate for a device never activated → 403 device_not_activated', async () => {
      const license = await issueLicense(api);
      await activate(api, license.key, 'machine-a');
      const response = await validate(api, license.key, 'machine-b');
      expectError(api, response, 'device_not_activated', 'device_id');
      expect(response.status).toBe(403);
    });

    it('deactivate frees the seat; after it validate, deactivate-once-more and the token behave as documented', async () => {
      const license = await issueLicense(api, { maxDevices: 1 });
      const a = await activate(api, license.key, 'machine-a');
      expectError(api, await activate(api, license.key, 'machine-b'), 'activation_limit_reached');

      const freed = await deactivate(api, license.key, 'machine-a');
      expect(freed.status).toBe(200);
      expect(freed.body).toMatchObject({
        activation_id: a.body.activation_id,
        device_id: 'machine-a',
        license: { id: license.id, active_devices: 0 },
      });
      expect(Date.parse(freed.body.deactivated_at)).toBeLessThanOrEqual(Date.now());
      expect(await activeSeats(api, license.id)).toBe(0);

      // A retried deactivation answers the same (the client may not have seen the first answer).
      const again = await deactivate(api, license.key, 'machine-a');
      expect(again.status).toBe(200);
      expect(again.body.activation_id).toBe(a.body.activation_id);

      expectError(api, await validate(api, license.key, 'machine-a'), 'device_not_activated', 'device_id');
      expectError(api, await entitlements(api, a.body.token), 'device_not_activated', 'X-License-Token');

      const b = await activate(api, license.key, 'machine-b');
      expect(b.status).toBe(200);
      expect(b.body.license.active_devices).toBe(1);
      // Re-activating the first machine later is a new seat again.
      expectError(api, await activate(api, license.key, 'machine-a'), 'activation_limit_reached');
    });

    // Issue 12 item 8: a token is bound to its activation, not only to the device.
    it('a token issued before deactivate stays refused after the same device re-activates; the new token works', async () => {
      const license = await issueLicense(api, { maxDevices: 1 });
      const first = await activate(api, license.key, 'machine-a');
      expect(first.status).toBe(200);
      expect((await entitlements(api, first.body.token)).status).toBe(200);
      expect((await deactivate(api, license.key, 'machine-a')).status).toBe(200);

      const second = await activate(api, license.key, 'machine-a');
      expect(second.status).toBe(200);
      expect(second.body.activation_id).not.toBe(first.body.activation_id);
      expect(decodeToken(first.body.token).claims.activation_id).toBe(first.body.activation_id);

      const old = await entitlements(api, first.body.token);
      expectError(api, old, 'device_not_activated', 'X-License-Token');
      expect(old.status).toBe(403);
      expect(old.body.error.message).toContain('earlier activation');
      const current = await entitlements(api, second.body.token);
      expect(current.status).toBe(200);
      expect(current.body.device.activation_id).toBe(second.body.activation_id);
      // A validate renews the current seat's token; the old one stays refused.
      const renewed = await validate(api, license.key, 'machine-a');
      expect((await entitlements(api, renewed.body.token)).status).toBe(200);
      expectError(api, await entitlements(api, first.body.token), 'device_not_activated', 'X-License-Token');
    });

    it('deactivate for a device that never held a seat → device_not_activated', async () => {
      const license = await issueLicense(api);
      expectError(api, await deactivate(api, license.key, 'ghost'), 'device_not_activated', 'device_id');
    });
  });

  describe('licence state', () => {
    it('an unknown or malformed key → 403 license_invalid on every call', async () => {
      const unknown = `mjl_${'Z9'.repeat(20)}`;
      for (const key of [unknown, 'not-a-licence-key', 'mjk_0123456789abcdefghijklmnopqrstuvwxyz']) {
        for (const response of [
          await activate(api, key, 'machine-a'),
          await validate(api, key, 'machine-a'),
          await deactivate(api, key, 'machine-a'),
        ]) {
          expectError(api, response, 'license_invalid', 'license_key');
          expect(response.status).toBe(403);
        }
      }
    });

    it('a revoked licence → license_invalid for activate, validate, deactivate and its tokens', async () => {
      const license = await issueLicense(api);
      const activated = await activate(api, license.key, 'machine-a');
      const revoked = await call(api, 'POST', `/v1/admin/licenses/${license.id}/revoke`, { admin: true });
      expect(revoked.status).toBe(200);
      expectError(api, await activate(api, license.key, 'machine-b'), 'license_invalid', 'license_key');
      expectError(api, await validate(api, license.key, 'machine-a'), 'license_invalid', 'license_key');
      expectError(api, await deactivate(api, license.key, 'machine-a'), 'license_invalid', 'license_key');
      expectError(api, await entitlements(api, activated.body.token), 'license_invalid', 'X-License-Token');
    });

    it('a licence past its expiry → license_expired (with expires_at) for every call and its tokens', async () => {
      const license = await issueLicense(api);
      const activated = await activate(api, license.key, 'machine-a');
      const db = api.app.get(DataSource);
      await db.query(`UPDATE licenses SET expires_at = now() - interval '1 second' WHERE id = $1`, [license.id]);
      for (const response of [
        await activate(api, license.key, 'machine-b'),
        await validate(api, license.key, 'machine-a'),
        await deactivate(api, license.key, 'machine-a'),
      ]) {
        expectError(api, response, 'license_expired', 'license_key');
        expect(response.status).toBe(403);
        expect(Date.parse(response.body.error.details.expires_at)).toBeLessThan(Date.now());
      }
      expectError(api, await entitlements(api, activated.body.token), 'license_expired', 'X-License-Token');
    });
  });

  describe('request shape', () => {
    it.each([
      ['/v1/license/activate', { device_id: 'a' }, 'missing_parameter', 'license_key'],
      ['/v1/license/activate', { license_key: 'mjl_x' }, 'missing_parameter', 'device_id'],
      ['/v1/license/activate', { license_key: 'mjl_x', device_id: 42 }, 'invalid_parameter', 'device_id'],
      ['/v1/license/activate', { license_key: 'mjl_x', device_id: '' }, 'invalid_parameter', 'device_id'],
      [
        '/v1/license/activate',
        { license_key: 'mjl_x', device_id: 'a', device_name: 7 },
        'invalid_parameter',
        'device_name',
      ],
      ['/v1/license/activate', { license_key: 'mjl_x', device_id: 'x'.repeat(201) }, 'invalid_parameter', 'device_id'],
      ['/v1/license/validate', { license_key: ['mjl_x'], device_id: 'a' }, 'invalid_parameter', 'license_key'],
      [
        '/v1/license/validate',
        { license_key: 'mjl_x', device_id: 'a', device_name: 'n' },
        'invalid_parameter',
        'device_name',
      ],
      ['/v1/license/deactivate', {}, 'missing_parameter', 'license_key'],
    ] as const)('POST %s %j → %s (param %s)', async (path, body, code, param) => {
      expectError(api, await call(api, 'POST', path, { body }), code, param);
    });

    it('malformed JSON → invalid_json', async () => {
      const response = await call(api, 'POST', '/v1/license/activate', {
        rawBody: '{"license_key":',
        headers: { 'content-type': 'application/json' },
      });
      expectError(api, response, 'invalid_json');
    });
  });
});
