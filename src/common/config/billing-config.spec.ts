import { ConfigError, parseConfig } from './config';

// Production needs these two anyway; the tests below are about BILLING_TOPUP_URL only.
const production = { NODE_ENV: 'production', ADMIN_TOKEN: 'a'.repeat(32), ASSET_URL_SECRET: 'b'.repeat(32) };

describe('BILLING_TOPUP_URL: where customers buy credits', () => {
  test('unset: no top-up link (credits come from the operator)', () => {
    expect(parseConfig({}).billingTopupUrl).toBeNull();
  });

  test('an https URL is kept, in production too', () => {
    const url = 'https://billing.example.com/topup?plan=credits';
    expect(parseConfig({ BILLING_TOPUP_URL: url }).billingTopupUrl).toBe(url);
    expect(parseConfig({ ...production, BILLING_TOPUP_URL: url }).billingTopupUrl).toBe(url);
  });

  test('http is allowed outside production only', () => {
    expect(parseConfig({ BILLING_TOPUP_URL: 'http://127.0.0.1:8080/topup' }).billingTopupUrl).toBe(
      'http://127.0.0.1:8080/topup',
    );
    expect(() => parseConfig({ ...production, BILLING_TOPUP_URL: 'http://billing.example.com/topup' })).toThrow(
      new ConfigError('BILLING_TOPUP_URL must use one of https:; got "http:".'),
    );
  });

  test('anything else stops start-up naming the variable', () => {
    expect(() => parseConfig({ BILLING_TOPUP_URL: 'billing.example.com' })).toThrow(
      /^BILLING_TOPUP_URL must be a URL \(https:, http:\); got "billing\.example\.com"\.$/,
    );
    expect(() => parseConfig({ BILLING_TOPUP_URL: 'javascript:alert(1)' })).toThrow(
      'BILLING_TOPUP_URL must use one of https:, http:; got "javascript:".',
    );
  });
});
