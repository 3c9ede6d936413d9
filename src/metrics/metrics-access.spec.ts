import { forwardedFurther, isLoopback, metricsAccess } from './metrics-access';

describe('who may read /metrics', () => {
  const token = 'metrics-token-0123456789';
  const from = (remoteAddress: string, authorization?: string) => ({ remoteAddress, authorization });

  it('with METRICS_TOKEN: only the bearer token, from anywhere, in any environment', () => {
    for (const nodeEnv of ['production', 'development']) {
      const settings = { metricsToken: token, nodeEnv };
      expect(metricsAccess(settings, from('203.0.113.9', `Bearer ${token}`))).toBe('allowed');
      expect(metricsAccess(settings, from('127.0.0.1', `bearer ${token}`))).toBe('allowed');
      expect(metricsAccess(settings, from('127.0.0.1'))).toBe('missing_token');
      expect(metricsAccess(settings, from('127.0.0.1', token))).toBe('missing_token');
      expect(metricsAccess(settings, from('127.0.0.1', 'Bearer nope'))).toBe('wrong_token');
      expect(metricsAccess(settings, from('127.0.0.1', `Bearer ${token}x`))).toBe('wrong_token');
    }
  });

  it('without a token in production: loopback clients only', () => {
    const settings = { metricsToken: null, nodeEnv: 'production' };
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      expect(metricsAccess(settings, from(address))).toBe('allowed');
    for (const address of ['10.0.0.5', '203.0.113.9', '::ffff:10.0.0.1', 'fe80::1', ''])
      expect(metricsAccess(settings, from(address))).toBe('not_loopback');
  });

  it('in production a loopback peer forwarding for someone else is not a loopback client', () => {
    const settings = { metricsToken: null, nodeEnv: 'production' };
    expect(metricsAccess(settings, { ...from('127.0.0.1'), forwardedFurther: true })).toBe('not_loopback');
    // Without TRUST_PROXY Fastify resolves only the peer (1 address); with it, the chain it believed.
    expect(forwardedFurther({}, 1)).toBe(false);
    expect(forwardedFurther({ 'x-forwarded-for': '203.0.113.9' }, 1)).toBe(true);
    expect(forwardedFurther({ 'x-forwarded-for': '203.0.113.9, 127.0.0.4' }, 3)).toBe(false);
    expect(forwardedFurther({ 'x-forwarded-for': '198.51.100.1,127.0.0.2' }, 2)).toBe(true);
    expect(forwardedFurther({ 'x-forwarded-for': ['198.51.100.1', '127.0.0.2'] }, 3)).toBe(false);
  });

  it('without a token outside production: open (development, tests)', () => {
    expect(metricsAccess({ metricsToken: null, nodeEnv: 'development' }, from('203.0.113.9'))).toBe('allowed');
  });

  it('isLoopback', () => {
    expect(isLoopback(undefined)).toBe(false);
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('1270.0.0.1')).toBe(false);
    expect(isLoopback('::2')).toBe(false);
  });
});
