import { Webhook } from 'standardwebhooks';
import { generateSecret, sign, signedHeaders } from './signature';

describe('Standard Webhooks signing', () => {
  const body = JSON.stringify({ id: 'evt_1', event: 'job.failed', data: { job: { job_id: 'job_1' }, error: null } });

  it('issues whsec_ secrets of 24 random bytes that the reference library accepts', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    expect(generateSecret()).not.toBe(secret);
    expect(() => new Webhook(secret)).not.toThrow();
  });

  it('produces exactly the reference library signature', () => {
    const secret = generateSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    expect(sign(secret, 'evt_1', timestamp, body)).toBe(
      new Webhook(secret).sign('evt_1', new Date(timestamp * 1000), body),
    );
  });

  it('is verified by the reference library with either secret when signed with both', () => {
    const [current, previous, stranger] = [generateSecret(), generateSecret(), generateSecret()];
    const headers = signedHeaders([current, previous], 'evt_1', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(stranger).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, { ...headers })).toThrow();
  });
});
