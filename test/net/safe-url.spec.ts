// checkUrl never connects: every name here is answered by a fake resolver, never by real DNS.
import { createAddressPolicy } from '../../src/common/net/address-policy';
import { checkUrl } from '../../src/common/net/safe-url';
import { fakeLookup } from './local-origin';

function resolver() {
  return fakeLookup({
    'public.test': ['93.184.216.34', '2606:4700:4700::1111'],
    'evil.test': ['10.0.0.5'],
    'mixed.test': ['93.184.216.34', '10.0.0.5'],
    'metadata.test': ['169.254.169.254'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'media.internal': ['10.1.2.3'],
    'empty.test': [],
  });
}

describe('checkUrl', () => {
  it.each([
    'ftp://example.com/a.mp4',
    'file:///etc/passwd',
    'gopher://example.com/',
    'data:video/mp4;base64,AAAA',
    'javascript:alert(1)',
    'ws://example.com/',
  ])('refuses the non-http scheme of %s', async (url) => {
    const lookup = resolver();
    await expect(checkUrl(url, { allow: [], lookup })).resolves.toMatchObject({ ok: false, refusal: 'scheme' });
    expect(lookup.calls).toEqual([]);
  });

  it.each(['http://user:pass@public.test/a.mp4', 'https://user@public.test/a.mp4', 'http://:secret@public.test/'])(
    'refuses credentials in %s before resolving',
    async (url) => {
      const lookup = resolver();
      await expect(checkUrl(url, { allow: [], lookup })).resolves.toMatchObject({ ok: false, refusal: 'credentials' });
      expect(lookup.calls).toEqual([]);
    },
  );

  it.each(['not a url', '', '/relative/path.mp4', 'http://'])('refuses the malformed %p', async (url) => {
    await expect(checkUrl(url, { allow: [], lookup: resolver() })).resolves.toMatchObject({
      ok: false,
      refusal: 'malformed',
    });
  });

  it.each([
    'http://10.0.0.5/a.mp4',
    'http://127.0.0.1:8080/a.mp4',
    'http://[::1]/a.mp4',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:10.0.0.1]/',
    'http://[64:ff9b::a00:1]/',
    'http://0.0.0.0/',
    'http://[fd00::1]/',
    'http://100.64.0.1/',
  ])('refuses the private literal %s without resolving', async (url) => {
    const lookup = resolver();
    const result = await checkUrl(url, { allow: [], lookup });
    expect(result).toMatchObject({ ok: false, refusal: 'private_address' });
    expect(lookup.calls).toEqual([]);
  });

  it.each([
    ['http://2130706433/', 'decimal'],
    ['http://0x7f.1/', 'hex, two parts'],
    ['http://0x7f000001/', 'hex'],
    ['http://0177.0.0.1/', 'octal'],
    ['http://127.1/', 'short'],
  ])('normalises %s (%s) to 127.0.0.1 and refuses it unless allowed', async (url) => {
    expect(new URL(url).hostname).toBe('127.0.0.1');
    await expect(checkUrl(url, { allow: [], lookup: resolver() })).resolves.toMatchObject({
      ok: false,
      refusal: 'private_address',
    });
    await expect(checkUrl(url, { allow: ['127.0.0.1'], lookup: resolver() })).resolves.toMatchObject({
      ok: true,
      addresses: ['127.0.0.1'],
    });
  });

  it.each(['evil.test', 'mixed.test', 'metadata.test', 'mapped.test'])(
    'refuses %s, which resolves to at least one private address',
    async (host) => {
      const result = await checkUrl(`https://${host}/a.mp4`, { allow: [], lookup: resolver() });
      expect(result).toMatchObject({ ok: false, refusal: 'private_address' });
      // The reason is shown to customers: it must not reveal internal addresses.
      expect(result.ok ? '' : result.reason).not.toMatch(/10\.0\.0\.5|169\.254/);
    },
  );

  it('accepts a name whose every address is public, on any port, and returns all addresses', async () => {
    const result = await checkUrl('https://public.test:8443/v/a.mp4?sig=abc', { allow: [], lookup: resolver() });
    expect(result).toMatchObject({ ok: true, addresses: ['93.184.216.34', '2606:4700:4700::1111'] });
    expect(result.ok && result.url.href).toBe('https://public.test:8443/v/a.mp4?sig=abc');
  });

  it('refuses with "unreachable" when the name does not resolve or resolves to nothing', async () => {
    const lookup = resolver();
    await expect(checkUrl('http://nowhere.test/', { allow: [], lookup })).resolves.toMatchObject({
      ok: false,
      refusal: 'unreachable',
    });
    await expect(checkUrl('http://empty.test/', { allow: [], lookup })).resolves.toMatchObject({
      ok: false,
      refusal: 'unreachable',
    });
    const result = await checkUrl('http://nowhere.test/', { allow: [], lookup });
    expect(result.ok ? '' : result.reason).toMatch(/unreachable/);
  });

  it('allows private addresses the operator exempts, by host name or CIDR, as a list or a built policy', async () => {
    const lookup = resolver();
    await expect(checkUrl('http://media.internal/a.mp4', { allow: ['media.internal'], lookup })).resolves.toMatchObject(
      { ok: true },
    );
    await expect(checkUrl('http://media.internal/a.mp4', { allow: ['10.1.0.0/16'], lookup })).resolves.toMatchObject({
      ok: true,
    });
    await expect(checkUrl('http://media.internal/a.mp4', { allow: ['10.2.0.0/16'], lookup })).resolves.toMatchObject({
      ok: false,
    });
    const policy = createAddressPolicy(['10.0.0.0/8']);
    await expect(checkUrl('http://evil.test/a.mp4', { allow: policy, lookup })).resolves.toMatchObject({ ok: true });
    await expect(checkUrl('http://metadata.test/', { allow: policy, lookup })).resolves.toMatchObject({ ok: false });
  });
});

describe('the refusal of a private address', () => {
  it('names ALLOW_PRIVATE_URLS when asked to explain the allow list (outside production)', async () => {
    const result = await checkUrl('http://127.0.0.1:8080/clip.mp4', { allow: [], explainAllowList: true });
    expect(result).toMatchObject({ ok: false, refusal: 'private_address' });
    expect(!result.ok && result.reason).toBe(
      'The URL points to a private, loopback or link-local address, which is not allowed. ' +
        'For local development, allow it with the setting ALLOW_PRIVATE_URLS (host and port, e.g. ALLOW_PRIVATE_URLS=127.0.0.1:8080).',
    );
  });

  it('says nothing of the setting otherwise (production)', async () => {
    const result = await checkUrl('http://127.0.0.1:8080/clip.mp4', { allow: [] });
    expect(!result.ok && result.reason).toBe(
      'The URL points to a private, loopback or link-local address, which is not allowed.',
    );
  });
});
