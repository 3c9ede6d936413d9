import { createHmac, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import {
  LICENSE_TOKEN_TYP,
  parseSigningKey,
  publicJwkOf,
  signLicenseToken,
  verifyLicenseToken,
  type LicenseTokenClaims,
} from './license-token';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const { kid } = publicJwkOf(publicKey);
const claims: LicenseTokenClaims = {
  license_id: 'lic_1',
  activation_id: 'act_1',
  device_id: 'dev-1',
  plan: 'standard',
  iat: 1_700_000_000,
  grace_until: 1_700_604_800,
  exp: 1_800_000_000,
};

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token built by hand, so each test can break exactly one thing. */
function forge(header: Record<string, unknown>, payload: unknown, key = privateKey): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

describe('licence tokens', () => {
  it('round-trips: the claims come back from a token this key signed', () => {
    const token = signLicenseToken(claims, privateKey, kid);
    expect(token.split('.')).toHaveLength(3);
    expect(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString())).toEqual({
      alg: 'EdDSA',
      typ: LICENSE_TOKEN_TYP,
      kid,
    });
    expect(verifyLicenseToken(token, publicKey, kid)).toEqual(claims);
  });

  it('the JWK is the RFC 7638 form of the key and imports back into the same key', () => {
    const jwk = publicJwkOf(publicKey);
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    const imported = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
    expect(imported.export({ format: 'der', type: 'spki' })).toEqual(publicKey.export({ format: 'der', type: 'spki' }));
  });

  it('refuses a token signed by another key, or with a tampered payload', () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    expect(verifyLicenseToken(signLicenseToken(claims, other, kid), publicKey, kid)).toBeNull();
    const [header, , signature] = signLicenseToken(claims, privateKey, kid).split('.');
    const tampered = `${header}.${b64({ ...claims, grace_until: claims.grace_until + 86400 })}.${signature}`;
    expect(verifyLicenseToken(tampered, publicKey, kid)).toBeNull();
  });

  it.each([
    ['alg none', { alg: 'none', typ: LICENSE_TOKEN_TYP, kid }],
    ['alg Ed25519 (not the pinned name)', { alg: 'Ed25519', typ: LICENSE_TOKEN_TYP, kid }],
    ['another typ', { alg: 'EdDSA', typ: 'JWT', kid }],
    ['another kid', { alg: 'EdDSA', typ: LICENSE_TOKEN_TYP, kid: 'other' }],
    ['a crit extension', { alg: 'EdDSA', typ: LICENSE_TOKEN_TYP, kid, crit: ['exp'] }],
    ['an embedded jwk', { alg: 'EdDSA', typ: LICENSE_TOKEN_TYP, kid, jwk: publicJwkOf(publicKey) }],
  ])('refuses a header with %s, even correctly signed', (_label, header) => {
    expect(verifyLicenseToken(forge(header, claims), publicKey, kid)).toBeNull();
  });

  it('refuses HS256 made with the public key as the HMAC secret (algorithm confusion)', () => {
    const input = `${b64({ alg: 'HS256', typ: LICENSE_TOKEN_TYP, kid })}.${b64(claims)}`;
    const secret = publicKey.export({ format: 'der', type: 'spki' });
    const token = `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
    expect(verifyLicenseToken(token, publicKey, kid)).toBeNull();
  });

  it.each([
    ['two parts', (token: string) => token.split('.').slice(0, 2).join('.')],
    ['four parts', (token: string) => `${token}.x`],
    ['an empty signature', (token: string) => token.replace(/\.[^.]+$/, '.')],
    ['padding characters', (token: string) => `${token}==`],
    ['a truncated signature', (token: string) => token.slice(0, -4)],
    ['a huge token', (token: string) => `${token}${'A'.repeat(5000)}`],
  ])('refuses a token with %s', (_label, mangle) => {
    expect(verifyLicenseToken(mangle(signLicenseToken(claims, privateKey, kid)), publicKey, kid)).toBeNull();
  });

  it('refuses correctly signed claims of the wrong shape', () => {
    const header = { alg: 'EdDSA', typ: LICENSE_TOKEN_TYP, kid };
    expect(verifyLicenseToken(forge(header, { ...claims, grace_until: '2030-01-01' }), publicKey, kid)).toBeNull();
    expect(verifyLicenseToken(forge(header, { ...claims, device_id: undefined }), publicKey, kid)).toBeNull();
    expect(verifyLicenseToken(forge(header, [claims]), publicKey, kid)).toBeNull();
    expect(verifyLicenseToken(forge(header, { ...claims, iat: 1.5 }), publicKey, kid)).toBeNull();
  });

  it('reads LICENSE_SIGNING_KEY (base64 PKCS#8 DER, as dev-setup writes it) and refuses other keys', () => {
    const base64 = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    expect(publicJwkOf(createPublicKey(parseSigningKey(base64))).kid).toBe(kid);
    expect(() => parseSigningKey('not a key')).toThrow(/PKCS#8/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    expect(() => parseSigningKey(rsa.export({ format: 'der', type: 'pkcs8' }).toString('base64'))).toThrow(/rsa/);
  });
});
