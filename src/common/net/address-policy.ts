// Which IP addresses a user-supplied URL may reach (docs/api-decisions.md §4, §6): only public unicast, unless the
// operator exempts a host or network with ALLOW_PRIVATE_URLS.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface AddressPolicy {
  /** True when `ip`, reached by the name `hostname` (or the literal itself), may be connected to. */
  allows(hostname: string, ip: string): boolean;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Parses a canonical IPv4 or IPv6 literal (as DNS or the WHATWG URL parser gives them); null otherwise. */
function parseStrict(ip: string): Address | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // net.isIP rejects the legacy forms (`0x7f.1`, `2130706433`) that ipaddr.js would also accept.
  if (isIP(bare) === 0) return null;
  try {
    return ipaddr.parse(bare);
  } catch {
    return null;
  }
}

function ipv4FromLow32(parts: number[]): ipaddr.IPv4 {
  return new ipaddr.IPv4([parts[6] >> 8, parts[6] & 0xff, parts[7] >> 8, parts[7] & 0xff]);
}

/**
 * The IPv4 address an IPv6 form carries and a router would reach in the end (IPv4-mapped, SIIT,
 * NAT64 well-known prefix, 6to4); null when the address does not embed one.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  switch (address.range()) {
    case 'ipv4Mapped':
      return address.toIPv4Address();
    case 'rfc6145':
      return ipv4FromLow32(address.parts);
    case 'rfc6052':
      // Only the well-known 64:ff9b::/96 has a fixed position; the local-use 64:ff9b:1::/48 is refused below.
      return address.match(ipaddr.parseCIDR('64:ff9b::/96')) ? ipv4FromLow32(address.parts) : null;
    case '6to4': {
      const [, high, low] = address.parts;
      return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
    }
    default:
      return null;
  }
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  // Deny by default: everything ipaddr.js knows as special (private, loopback, link-local incl.
  // 169.254.169.254, CGNAT, 0/8, multicast, broadcast, reserved, benchmarking, …) is refused.
  return address.range() === 'unicast';
}

function isPublicAddress(address: Address): boolean {
  if (address.kind() === 'ipv4') return isPublicIPv4(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return isPublicIPv4(embedded);
  // Outside 2000::/3 nothing is routable on the internet (this also catches ::a.b.c.d, the
  // deprecated IPv4-compatible form); inside it, Teredo, documentation and the like are refused.
  return v6.match(GLOBAL_UNICAST_V6) && v6.range() === 'unicast';
}

/**
 * True for every address a server-side fetch must not reach on a user's behalf: private, loopback,
 * link-local (cloud metadata), unique-local, CGNAT, unspecified, multicast, broadcast, reserved,
 * and IPv6 forms that embed such an IPv4 address. Anything that is not a valid IP literal is
 * forbidden too (fail closed).
 */
export function isForbiddenAddress(ip: string): boolean {
  const address = parseStrict(ip);
  return address === null || !isPublicAddress(address);
}

/** An IPv4-mapped IPv6 address compares as its IPv4 address, so `127.0.0.1` also covers `::ffff:127.0.0.1`. */
function unmap(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

function normaliseHostname(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * Builds the policy from ALLOW_PRIVATE_URLS entries: IP addresses, CIDRs (`10.1.0.0/16`, `fd00::/8`)
 * or exact host names (`media.internal`, whose every address is then allowed). A malformed entry
 * throws, so a bad configuration stops start-up instead of silently allowing nothing.
 */
export function createAddressPolicy(allow: readonly string[]): AddressPolicy {
  const networks: [Address, number][] = [];
  const hosts = new Set<string>();
  for (const raw of allow) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (entry.includes('/')) {
      const [base, bits, extra] = entry.split('/');
      const address = parseStrict(base);
      if (
        address === null ||
        extra !== undefined ||
        !/^\d{1,3}$/.test(bits) ||
        !ipaddr.isValidCIDR(`${address.toString()}/${bits}`)
      ) {
        throw new Error(`ALLOW_PRIVATE_URLS: "${entry}" is not a valid CIDR (e.g. 10.1.0.0/16 or fd00::/8).`);
      }
      const network = ipaddr.parseCIDR(`${address.toString()}/${bits}`);
      networks.push(
        network[0].kind() === 'ipv6' && (network[0] as ipaddr.IPv6).isIPv4MappedAddress() && network[1] >= 96
          ? [unmap(network[0]), network[1] - 96]
          : network,
      );
      continue;
    }
    const address = parseStrict(entry);
    if (address) {
      const single = unmap(address);
      networks.push([single, single.kind() === 'ipv4' ? 32 : 128]);
      continue;
    }
    const host = normaliseHostname(entry);
    if (!HOSTNAME.test(host)) {
      throw new Error(`ALLOW_PRIVATE_URLS: "${entry}" is neither an IP address, a CIDR nor a host name.`);
    }
    hosts.add(host);
  }

  return {
    allows(hostname: string, ip: string): boolean {
      const parsed = parseStrict(ip);
      if (parsed === null) return false;
      if (isPublicAddress(parsed)) return true;
      if (hosts.has(normaliseHostname(hostname))) return true;
      const address = unmap(parsed);
      return networks.some(([base, bits]) => base.kind() === address.kind() && address.match(base, bits));
    },
  };
}
