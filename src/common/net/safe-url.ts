// Checks a user-supplied URL before anything connects to it: scheme, credentials, and every address
// its host resolves to (docs/api-decisions.md §4 source URLs, §6 webhook URLs).
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type AddressPolicy, createAddressPolicy } from './address-policy';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all of its addresses; injectable so tests never depend on real DNS. */
export type LookupFunction = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: LookupFunction = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** ALLOW_PRIVATE_URLS entries, or a policy already built from them. */
export type AllowList = readonly string[] | AddressPolicy;

export interface CheckUrlOptions {
  allow: AllowList;
  lookup?: LookupFunction;
  /** Outside production: a private address's refusal names the setting that allows it. */
  explainAllowList?: boolean;
}

export type UrlRefusal = 'malformed' | 'scheme' | 'credentials' | 'private_address' | 'unreachable';

export type CheckUrlResult =
  { ok: true; url: URL; addresses: string[] } | { ok: false; refusal: UrlRefusal; reason: string };

// Client-facing wording: never names the resolved addresses (they may describe internal networks).
const REASONS: Record<UrlRefusal, string> = {
  malformed: 'The URL is not a valid absolute URL.',
  scheme: 'Only http and https URLs are accepted.',
  credentials: 'The URL must not contain a user name or password.',
  private_address: 'The URL points to a private, loopback or link-local address, which is not allowed.',
  unreachable: 'The URL is unreachable: its host name could not be resolved.',
};

// A developer whose test source is on their own machine learns how to allow it; production says nothing
// of its configuration.
const ALLOW_LIST_HINT =
  'For local development, allow it with the setting ALLOW_PRIVATE_URLS (host and port, e.g. ALLOW_PRIVATE_URLS=127.0.0.1:8080).';

function refuse(refusal: UrlRefusal, explainAllowList = false): CheckUrlResult {
  const reason =
    refusal === 'private_address' && explainAllowList ? `${REASONS[refusal]} ${ALLOW_LIST_HINT}` : REASONS[refusal];
  return { ok: false, refusal, reason };
}

export function toPolicy(allow: AllowList): AddressPolicy {
  return 'allows' in allow ? allow : createAddressPolicy(allow);
}

/** The URL's host as a connectable name: IPv6 literals lose their brackets. */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Parses and checks `raw`. The WHATWG parser has already normalised numeric IPv4 spellings
 * (`http://2130706433/`, `http://0x7f.1/` → 127.0.0.1), so literals are checked in canonical form.
 * Every resolved address must be allowed; one private answer refuses the whole name.
 */
export async function checkUrl(raw: string | URL, options: CheckUrlOptions): Promise<CheckUrlResult> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('malformed');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse('scheme');
  if (url.username !== '' || url.password !== '') return refuse('credentials');
  const hostname = bareHostname(url);
  if (hostname === '') return refuse('malformed');

  let addresses: string[];
  if (isIP(hostname) !== 0) {
    addresses = [hostname];
  } else {
    try {
      addresses = (await (options.lookup ?? systemLookup)(hostname)).map((entry) => entry.address);
    } catch {
      return refuse('unreachable');
    }
    if (addresses.length === 0) return refuse('unreachable');
  }

  const policy = toPolicy(options.allow);
  // The port decides too: an allowed `127.0.0.1:8080` must not open the host's Redis or PostgreSQL.
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!addresses.every((address) => policy.allows(hostname, address, port)))
    return refuse('private_address', options.explainAllowList);
  return { ok: true, url, addresses };
}
