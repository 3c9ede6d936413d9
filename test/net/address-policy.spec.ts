import { createAddressPolicy, isForbiddenAddress } from '../../src/common/net/address-policy';

describe('isForbiddenAddress', () => {
  it.each([
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12'],
    ['192.168.1.1', 'private 192.168/16'],
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback 127/8'],
    ['::1', 'IPv6 loopback'],
    ['169.254.169.254', 'cloud metadata (link-local)'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'IPv6 link-local'],
    ['febf::1', 'IPv6 link-local fe80::/10'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '0.0.0.0/8'],
    ['::', 'IPv6 unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'IPv6 multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved 240/4'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.0.1', 'IETF protocol assignments'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:0:10.0.0.1', 'SIIT (RFC 6145) private'],
    ['64:ff9b::10.0.0.1', 'NAT64 private'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 metadata'],
    ['64:ff9b:1::a00:1', 'local-use NAT64 prefix'],
    ['2002:a00:1::1', '6to4 of 10.0.0.1'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['::127.0.0.1', 'deprecated IPv4-compatible'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['2001::1', 'Teredo'],
    ['fec0::1', 'site-local'],
    ['4000::1', 'outside 2000::/3'],
    ['not-an-ip', 'not an address'],
    ['2130706433', 'legacy decimal form is not a canonical literal'],
    ['0x7f.1', 'legacy hex form is not a canonical literal'],
    ['', 'empty'],
  ])('%s is forbidden (%s)', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each([
    ['93.184.216.34', 'public IPv4'],
    ['8.8.8.8', 'public IPv4'],
    ['172.32.0.1', 'just above 172.16/12'],
    ['172.15.255.255', 'just below 172.16/12'],
    ['100.128.0.1', 'just above CGNAT'],
    ['169.253.255.255', 'just below link-local'],
    ['11.0.0.1', 'just above 10/8'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['2001:4860:4860::8888', 'public IPv6'],
    ['::ffff:93.184.216.34', 'IPv4-mapped public'],
    ['64:ff9b::5db8:d822', 'NAT64 of a public address'],
    ['2002:5db8:d822::1', '6to4 of a public address'],
  ])('%s is allowed (%s)', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});

describe('createAddressPolicy', () => {
  const policy = createAddressPolicy(['127.0.0.1', ' ::1 ', '10.1.0.0/16', 'fd00:1::/32', 'media.internal', '']);

  it('allows public addresses whatever the host name', () => {
    expect(policy.allows('example.com', '93.184.216.34')).toBe(true);
    expect(policy.allows('example.com', '2606:4700:4700::1111')).toBe(true);
  });

  it('allows listed IP addresses, also in their IPv4-mapped form', () => {
    expect(policy.allows('127.0.0.1', '127.0.0.1')).toBe(true);
    expect(policy.allows('localhost', '127.0.0.1')).toBe(true);
    expect(policy.allows('localhost', '::1')).toBe(true);
    expect(policy.allows('x.test', '::ffff:127.0.0.1')).toBe(true);
    expect(policy.allows('x.test', '127.0.0.2')).toBe(false);
  });

  it('allows addresses inside listed CIDRs only', () => {
    expect(policy.allows('x.test', '10.1.0.1')).toBe(true);
    expect(policy.allows('x.test', '10.1.255.254')).toBe(true);
    expect(policy.allows('x.test', '10.2.0.1')).toBe(false);
    expect(policy.allows('x.test', '::ffff:10.1.2.3')).toBe(true);
    expect(policy.allows('x.test', 'fd00:1::5')).toBe(true);
    expect(policy.allows('x.test', 'fd00:2::5')).toBe(false);
  });

  it('allows any address of a listed host name, case- and trailing-dot-insensitively, and nothing else', () => {
    expect(policy.allows('media.internal', '10.9.9.9')).toBe(true);
    expect(policy.allows('MEDIA.Internal.', '192.168.0.7')).toBe(true);
    expect(policy.allows('other.internal', '10.9.9.9')).toBe(false);
    expect(policy.allows('evil.media.internal', '10.9.9.9')).toBe(false);
  });

  it('keeps refusing metadata, link-local and unlisted private addresses', () => {
    expect(policy.allows('x.test', '169.254.169.254')).toBe(false);
    expect(policy.allows('x.test', 'fe80::1')).toBe(false);
    expect(policy.allows('x.test', '192.168.1.1')).toBe(false);
    expect(policy.allows('x.test', 'garbage')).toBe(false);
  });

  it('an empty list allows public addresses only', () => {
    const strict = createAddressPolicy([]);
    expect(strict.allows('localhost', '127.0.0.1')).toBe(false);
    expect(strict.allows('example.com', '93.184.216.34')).toBe(true);
  });

  it.each(['10.0.0.0/33', '::1/129', '10.0.0.0/', '10.0.0.0/abc', 'exa mple', 'bad_host!', '1.2.3.4/8/8'])(
    'rejects the malformed entry %p with a message naming the variable',
    (entry) => {
      expect(() => createAddressPolicy([entry])).toThrow(/ALLOW_PRIVATE_URLS/);
    },
  );
});
