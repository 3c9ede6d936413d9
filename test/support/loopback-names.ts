// Host names that reach this machine without looking like it: what an operator might write in
// ALLOW_PRIVATE_URLS believing it names another host (issue 36 item 8).
import { readFileSync } from 'node:fs';

/**
 * A name other than `localhost` that /etc/hosts maps to a loopback address: the host's own name
 * (`vm` → 127.0.0.1) or Debian's `ip6-localhost` (::1). Read from the file so the test never depends
 * on DNS; a machine without one fails here rather than skipping the check.
 */
export function loopbackHostName(): string {
  for (const line of readFileSync('/etc/hosts', 'utf8').split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || !(/^127\./.test(address) || address === '::1')) continue;
    const name = names.find((candidate) => candidate !== 'localhost' && !candidate.endsWith('.localhost'));
    if (name) return name;
  }
  throw new Error('/etc/hosts maps no name other than localhost to loopback; add e.g. "::1 ip6-localhost".');
}
