// license.verifyOffline against tokens signed here with node:crypto, the way the service signs them:
// signature and header checks, expiry, offline grace and the clock-rollback rule.

import assert from 'node:assert/strict';
import { createHash, createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  LICENSE_TOKEN_TYP,
  LicenseError,
  MAX_CLOCK_SKEW_SECONDS,
  MediaJobs,
  type LicenseVerificationKey,
} from '../src/index.js';

const client = new MediaJobs({ apiKey: 'mjk_test', baseUrl: 'http://127.0.0.1:9' });
const { privateKey, publicKey } = generateKeyPairSync('ed25519');

function jwkOf(key: KeyObject): LicenseVerificationKey {
  const x = key.export({ format: 'jwk' }).x as string;
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x }))
    .digest('base64url');
  return { kty: 'OKP', crv: 'Ed25519', x, kid };
}
const jwk = jwkOf(publicKey);

const T0 = Date.parse('2030-01-01T00:00:00Z');
const DAY = 86_400_000;
const claims = {
  license_id: 'lic_1',
  activation_id: 'act_1',
  device_id: 'machine-a',
  plan: 'studio',
  iat: T0 / 1000,
  grace_until: (T0 + 7 * DAY) / 1000,
  exp: (T0 + 365 * DAY) / 1000,
};

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function token(
  overrides: Record<string, unknown> = {},
  header: Record<string, unknown> = { alg: 'EdDSA', typ: LICENSE_TOKEN_TYP, kid: jwk.kid },
  key = privateKey,
): string {
  const input = `${b64(header)}.${b64({ ...claims, ...overrides })}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

function refusal(run: () => unknown): LicenseError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof LicenseError, `expected LicenseError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the token to be refused');
}

describe('license.verifyOffline', () => {
  test('accepts a valid token within its grace and returns the claims and the time to remember', () => {
    const now = new Date(T0 + DAY);
    const verified = client.license.verifyOffline(token(), jwk, now);
    assert.equal(verified.licenseId, 'lic_1');
    assert.equal(verified.deviceId, 'machine-a');
    assert.equal(verified.activationId, 'act_1');
    assert.equal(verified.plan, 'studio');
    assert.equal(verified.issuedAt.getTime(), T0);
    assert.equal(verified.graceUntil.getTime(), T0 + 7 * DAY);
    assert.equal(verified.expiresAt.getTime(), T0 + 365 * DAY);
    assert.equal(verified.lastSeenAt.getTime(), now.getTime());
    // A number (ms) works as well as a Date.
    assert.equal(client.license.verifyOffline(token(), jwk, T0 + DAY).licenseId, 'lic_1');
  });

  test('after grace_until → LicenseError offline_grace_expired, retryable (validate online, then retry)', () => {
    const error = refusal(() => client.license.verifyOffline(token(), jwk, T0 + 7 * DAY));
    assert.equal(error.code, 'offline_grace_expired');
    assert.equal(error.type, 'license_error');
    assert.equal(error.retryable, true);
    assert.equal(error.details?.offline_grace_until, new Date(T0 + 7 * DAY).toISOString());
    assert.ok(client.license.verifyOffline(token(), jwk, T0 + 7 * DAY - 1));
  });

  test('after the licence expiry → license_expired, not retryable', () => {
    const short = token({ exp: (T0 + 2 * DAY) / 1000 });
    const error = refusal(() => client.license.verifyOffline(short, jwk, T0 + 3 * DAY));
    assert.equal(error.code, 'license_expired');
    assert.equal(error.retryable, false);
  });

  describe('clock rollback', () => {
    test('clock went back past the last seen time and the token is issued later than now → refused', () => {
      const lastSeenAt = new Date(T0 + DAY);
      const now = new Date(T0 - 30 * DAY); // turned back a month
      const error = refusal(() => client.license.verifyOffline(token(), jwk, now, { lastSeenAt }));
      assert.equal(error.code, 'offline_grace_expired');
      assert.equal(error.retryable, true);
      assert.equal(error.details?.reason, 'clock_rollback');
      assert.equal(error.details?.last_seen_at, lastSeenAt.toISOString());
    });

    test('even a token issued before the rolled-back clock cannot outlive its grace: time is max(now, lastSeenAt)', () => {
      const lastSeenAt = T0 + 8 * DAY; // already past grace_until
      const now = T0 + DAY; // clock turned back into the grace period
      const error = refusal(() => client.license.verifyOffline(token(), jwk, now, { lastSeenAt }));
      assert.equal(error.code, 'offline_grace_expired');
      assert.equal(error.details?.reason, undefined);
      const within = client.license.verifyOffline(token(), jwk, now, { lastSeenAt: T0 + 2 * DAY });
      assert.equal(within.lastSeenAt.getTime(), T0 + 2 * DAY, 'the remembered time never goes back');
    });

    test('a small lead of issued_at over a clock that did not go back is skew, and accepted', () => {
      const now = T0 - 10_000; // this clock is 10 s behind the server's
      assert.ok(client.license.verifyOffline(token(), jwk, now, { lastSeenAt: now - 60_000 }));
      assert.ok(client.license.verifyOffline(token(), jwk, now));
    });

    test(`issued_at more than ${MAX_CLOCK_SKEW_SECONDS} s after now is refused even without lastSeenAt`, () => {
      const error = refusal(() => client.license.verifyOffline(token(), jwk, T0 - (MAX_CLOCK_SKEW_SECONDS + 1) * 1000));
      assert.equal(error.code, 'offline_grace_expired');
      assert.equal(error.details?.reason, 'clock_rollback');
    });
  });

  describe('signature and structure (license_invalid)', () => {
    const now = T0 + DAY;
    const invalid = (value: string, key: LicenseVerificationKey = jwk) => {
      const error = refusal(() => client.license.verifyOffline(value, key, now));
      assert.equal(error.code, 'license_invalid');
      assert.equal(error.retryable, false);
    };

    test('a token signed by another key', () => {
      invalid(token({}, undefined, generateKeyPairSync('ed25519').privateKey));
      const other = jwkOf(generateKeyPairSync('ed25519').publicKey);
      invalid(token(), other);
      invalid(token(), { kty: 'OKP', crv: 'Ed25519', x: other.x }); // no kid: the signature decides
    });

    test('a payload changed after signing', () => {
      const [header, , signature] = token().split('.');
      invalid(`${header}.${b64({ ...claims, grace_until: claims.grace_until + 365 * 86400 })}.${signature}`);
    });

    test('alg none, HS256 with the public key as secret, another typ, extra header fields', () => {
      invalid(`${b64({ alg: 'none', typ: LICENSE_TOKEN_TYP, kid: jwk.kid })}.${b64(claims)}.`);
      const hsInput = `${b64({ alg: 'HS256', typ: LICENSE_TOKEN_TYP, kid: jwk.kid })}.${b64(claims)}`;
      const hmac = createHmac('sha256', Buffer.from(jwk.x, 'base64url')).update(hsInput).digest('base64url');
      invalid(`${hsInput}.${hmac}`);
      invalid(token({}, { alg: 'EdDSA', typ: 'JWT', kid: jwk.kid }));
      invalid(token({}, { alg: 'EdDSA', typ: LICENSE_TOKEN_TYP, kid: jwk.kid, crit: ['exp'] }));
    });

    test('not three base64url parts, or claims of the wrong types', () => {
      invalid('');
      invalid('a.b');
      invalid(`${token()}.extra`);
      invalid(`${token()}=`);
      invalid(token({ grace_until: '2030-01-08T00:00:00Z' }));
      invalid(token({ device_id: 42 }));
    });

    test('a public key that is not an Ed25519 JWK is a programming error (TypeError)', () => {
      assert.throws(
        () => client.license.verifyOffline(token(), { kty: 'RSA' } as unknown as LicenseVerificationKey, now),
        TypeError,
      );
    });
  });
});
