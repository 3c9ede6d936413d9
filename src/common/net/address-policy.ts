// Which IP addresses a user-supplied URL may reach (docs/api-decisions.md §4, §6): only public unicast, unless the
// operator exempts a host, a host's one port, or a network with ALLOW_PRIVATE_URLS (docs/configuration.md).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface AddressPolicy {
  /**
   * True when `ip`, reached by the name `hostname` (or the literal itself) on `port`, may be connected to.
   * Without a port only the port-less entries can allow a private address (fail closed).
   */
  allows(hostname: string, ip: string, port?: number): boolean;
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

/** One ALLOW_PRIVATE_URLS entry: a network (a single address is a /32 or /128) or a host name, with or without a port. */
type Entry =
  | { kind: 'network'; network: [Address, number]; port: number | null }
  | { kind: 'host'; host: string; port: number | null };

function parsePort(text: string, entry: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535))
    throw new Error(`ALLOW_PRIVATE_URLS: "${entry}" has no valid port (1-65535 after the colon).`);
  return port;
}

function single(address: Address): [Address, number] {
  const bare = unmap(address);
  return [bare, bare.kind() === 'ipv4' ? 32 : 128];
}

function parseCidr(entry: string): [Address, number] {
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
  return network[0].kind() === 'ipv6' && (network[0] as ipaddr.IPv6).isIPv4MappedAddress() && network[1] >= 96
    ? [unmap(network[0]), network[1] - 96]
    : network;
}

function parseHost(text: string, entry: string): string {
  const host = normaliseHostname(text);
  if (!HOSTNAME.test(host)) {
    throw new Error(
      `ALLOW_PRIVATE_URLS: "${entry}" is neither an IP address, a CIDR, a host name nor one of them with :port.`,
    );
  }
  return host;
}

/**
 * Entries: `10.1.0.0/16` (CIDR), `10.1.2.3`, `::1`, `media.internal` (every port), and the same with one port:
 * `127.0.0.1:8080`, `[::1]:8080`, `media.internal:8443`. A malformed entry throws.
 */
function parseEntry(entry: string): Entry {
  if (entry.includes('/')) return { kind: 'network', network: parseCidr(entry), port: null };
  const address = parseStrict(entry);
  if (address) return { kind: 'network', network: single(address), port: null };
  const bracketed = /^\[([^\]]*)\]:(.*)$/.exec(entry);
  if (bracketed) {
    const v6 = parseStrict(bracketed[1]);
    if (!v6 || v6.kind() !== 'ipv6') throw new Error(`ALLOW_PRIVATE_URLS: "${entry}" is not [IPv6 address]:port.`);
    return { kind: 'network', network: single(v6), port: parsePort(bracketed[2], entry) };
  }
  const colon = entry.lastIndexOf(':');
  if (colon > 0 && !entry.slice(0, colon).includes(':')) {
    const port = parsePort(entry.slice(colon + 1), entry);
    const host = entry.slice(0, colon);
    const ip = parseStrict(host);
    return ip ? { kind: 'network', network: single(ip), port } : { kind: 'host', host: parseHost(host, entry), port };
  }
  return { kind: 'host', host: parseHost(entry, entry), port: null };
}

function parseEntries(allow: readonly string[]): Entry[] {
  return allow
    .map((raw) => raw.trim())
    .filter((entry) => entry !== '')
    .map(parseEntry);
}

const LOOPBACK_PROBES = ['127.0.0.1', '::1', '0.0.0.0', '::'].map((ip) => ipaddr.parse(ip));

/** Whether a port-less entry would reach this host's own services: loopback, the unspecified address, localhost. */
function coversLoopback(entry: Entry): boolean {
  if (entry.port !== null) return false;
  if (entry.kind === 'host') return entry.host === 'localhost' || entry.host.endsWith('.localhost');
  const [base, bits] = entry.network;
  if (['loopback', 'unspecified'].includes(base.range())) return true;
  return LOOPBACK_PROBES.some((probe) => probe.kind() === base.kind() && probe.match(base, bits));
}

/**
 * The entries that allow every port of this host (a bare `127.0.0.1`, `::1`, `localhost`, a CIDR holding
 * them): through them a source URL or webhook reaches the host's Redis, PostgreSQL and admin ports.
 * Production refuses them at start-up (src/common/config/config.ts); development keeps them for origins
 * on ephemeral ports.
 */
export function loopbackEntriesWithoutPort(allow: readonly string[]): string[] {
  const entries = allow.map((raw) => raw.trim()).filter((entry) => entry !== '');
  return entries.filter((entry) => coversLoopback(parseEntry(entry)));
}

/**
 * The port-less host-name entries that resolve, now, to loopback or the unspecified address: `vm` when
 * /etc/hosts maps the host's own name to 127.0.0.1, `ip6-localhost`. They open every port of this host
 * exactly like a bare `127.0.0.1` (loopbackEntriesWithoutPort), which sees only the literal forms. A
 * name that does not resolve reaches nothing now and is not listed.
 */
export async function loopbackNamesWithoutPort(allow: readonly string[]): Promise<string[]> {
  const portlessNames = allow
    .map((raw) => raw.trim())
    .filter((raw) => raw !== '')
    .flatMap((raw) => {
      const entry = parseEntry(raw);
      return entry.kind === 'host' && entry.port === null ? [{ raw, host: entry.host }] : [];
    });
  const verdicts = await Promise.all(
    portlessNames.map(async ({ raw, host }) => {
      const resolved = await lookup(host, { all: true, verbatim: true }).catch(() => []);
      const reachesThisHost = resolved.some(({ address }) => {
        const parsed = parseStrict(address);
        return parsed !== null && coversLoopback({ kind: 'network', network: single(parsed), port: null });
      });
      return reachesThisHost ? raw : null;
    }),
  );
  return verdicts.filter((raw): raw is string => raw !== null);
}

/**
 * Builds the policy from ALLOW_PRIVATE_URLS entries (parseEntry). An entry with a port allows that port only;
 * a host name allows every address it resolves to. A malformed entry throws, so a bad configuration stops
 * start-up instead of silently allowing nothing.
 */
export function createAddressPolicy(allow: readonly string[]): AddressPolicy {
  const entries = parseEntries(allow);
  return {
    allows(hostname: string, ip: string, port?: number): boolean {
      const parsed = parseStrict(ip);
      if (parsed === null) return false;
      if (isPublicAddress(parsed)) return true;
      const host = normaliseHostname(hostname);
      const address = unmap(parsed);
      return entries.some((entry) => {
        if (entry.port !== null && entry.port !== port) return false;
        if (entry.kind === 'host') return entry.host === host;
        const [base, bits] = entry.network;
        return base.kind() === address.kind() && address.match(base, bits);
      });
    },
  };
}
