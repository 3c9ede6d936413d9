import { Logger } from '@nestjs/common';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { checkApiConfig, ConfigError, parseConfig } from '../common/config/config';
import { LicenseSigner } from './license-signer';

const pkcs8 = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
  key.export({ format: 'der', type: 'pkcs8' }).toString('base64');

function signerWith(env: Record<string, string>): LicenseSigner {
  return new LicenseSigner(parseConfig({ ADMIN_TOKEN: 'signer-spec-admin-token', ...env }));
}

describe('LicenseSigner', () => {
  afterEach(() => jest.restoreAllMocks());

  it('signs with LICENSE_SIGNING_KEY and publishes its public half', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const signer = signerWith({
      NODE_ENV: 'production',
      ASSET_URL_SECRET: 'x'.repeat(32),
      LICENSE_SIGNING_KEY: pkcs8(privateKey),
    });
    expect(signer.jwk.x).toBe(publicKey.export({ format: 'jwk' }).x);
  });

  it('without a key in production the API does not start: ConfigError naming the variable', () => {
    const config = parseConfig({
      ADMIN_TOKEN: 'signer-spec-admin-token',
      NODE_ENV: 'production',
      ASSET_URL_SECRET: 'x'.repeat(32),
    });
    expect(() => checkApiConfig(config)).toThrow(ConfigError);
    expect(() => checkApiConfig(config)).toThrow(/LICENSE_SIGNING_KEY must be set in production/);
  });

  it('without a key elsewhere: an ephemeral key and a warning (which never contains key material)', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const first = signerWith({ NODE_ENV: 'development' });
    const second = signerWith({ NODE_ENV: 'test' });
    expect(first.jwk.x).not.toBe(second.jwk.x);
    expect(() => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: first.jwk.x }, format: 'jwk' })).not.toThrow();
    expect(warn).toHaveBeenCalledTimes(2);
    expect(String(warn.mock.calls[0][0])).toMatch(/LICENSE_SIGNING_KEY is not set/);
  });

  it.each([
    ['an RSA key', () => pkcs8(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey), /not Ed25519/],
    ['not a key at all', () => 'bm90IGEga2V5', /PKCS#8/],
  ])('the configuration refuses %s with a ConfigError', (_label, key, message) => {
    expect(() => parseConfig({ LICENSE_SIGNING_KEY: key() })).toThrow(ConfigError);
    expect(() => parseConfig({ LICENSE_SIGNING_KEY: key() })).toThrow(message);
  });
});
