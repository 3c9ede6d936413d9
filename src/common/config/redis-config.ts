// Where Redis is (docs/configuration.md "Redis"): one node (REDIS_URL), a Redis Cluster
// (REDIS_CLUSTER_NODES) or a master found through Redis Sentinel (REDIS_SENTINELS + REDIS_SENTINEL_NAME,
// and REDIS_SENTINEL_PASSWORD for sentinels that require one). REDIS_URL's user, password and scheme
// (rediss: = TLS) apply to the Redis nodes in every form; with a cluster or sentinels its host and port
// are not used.

export interface RedisAddress {
  host: string;
  port: number;
}

export type RedisTopology =
  | { kind: 'single' }
  | { kind: 'cluster'; nodes: RedisAddress[] }
  | {
      kind: 'sentinel';
      sentinels: RedisAddress[];
      name: string;
      /** The sentinels' own `requirepass` (not the master's, which is REDIS_URL's); redacted by name in logs. */
      password: string | undefined;
    };

type Env = Record<string, string | undefined>;

/** Thrown for a bad combination or value; config.ts turns it into its ConfigError. */
export class RedisConfigError extends Error {}

function addresses(env: Env, name: string): RedisAddress[] {
  const parts = (env[name] ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  return parts.map((part) => {
    // host:port, the host a name, an IPv4 address or a bracketed IPv6 address ([::1]:7000).
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(part);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) {
      throw new RedisConfigError(
        `${name} must be comma-separated host:port pairs (e.g. 10.0.0.1:7000,10.0.0.2:7000); got "${part}".`,
      );
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

/** The topology named by the environment; `redisUrl` is REDIS_URL as parsed (or its default). */
export function parseRedisTopology(env: Env, redisUrl: string): RedisTopology {
  const nodes = addresses(env, 'REDIS_CLUSTER_NODES');
  const sentinels = addresses(env, 'REDIS_SENTINELS');
  const name = (env.REDIS_SENTINEL_NAME ?? '').trim();
  if (nodes.length && sentinels.length) {
    throw new RedisConfigError(
      'Set REDIS_CLUSTER_NODES or REDIS_SENTINELS, not both: a Redis Cluster does its own failover.',
    );
  }
  if (sentinels.length && !name) {
    throw new RedisConfigError('REDIS_SENTINELS needs REDIS_SENTINEL_NAME (the master name the sentinels monitor).');
  }
  if (name && !sentinels.length) {
    throw new RedisConfigError('REDIS_SENTINEL_NAME is set without REDIS_SENTINELS (comma-separated host:port).');
  }
  const password = env.REDIS_SENTINEL_PASSWORD || undefined;
  if (password && !sentinels.length) {
    throw new RedisConfigError('REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS (comma-separated host:port).');
  }
  if (name && !/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
    throw new RedisConfigError(
      `REDIS_SENTINEL_NAME must be 1-64 characters of A-Z, a-z, 0-9, ., _ and -; got "${name}".`,
    );
  }
  if (nodes.length) {
    // A cluster has database 0 only (SELECT is refused).
    const db = new URL(redisUrl).pathname.replace(/^\/+/, '');
    if (db !== '' && db !== '0') {
      throw new RedisConfigError(`REDIS_CLUSTER_NODES: a Redis Cluster has database 0 only; REDIS_URL names /${db}.`);
    }
    return { kind: 'cluster', nodes };
  }
  if (sentinels.length) return { kind: 'sentinel', sentinels, name, password };
  return { kind: 'single' };
}

/**
 * The prefix of every key and BullMQ queue. On a cluster it is a hash tag (`{mj}`): every key of the
 * service lands in one slot, which BullMQ requires of each queue's keys (its scripts touch many keys
 * of a queue at once) and which keeps every multi-key command of ours in one slot too — the rate
 * limiter's script reads the credentials version and the failed-credential budget beside its counter,
 * a worker's heartbeat is one MULTI over the regions and workers sets, the event relay pipelines its
 * publishes. The price: one master holds all of this service's keys (its replica takes over when it
 * fails); the cluster's other slots are free for other tenants (docs/operations.md "Redis Cluster").
 */
export function keyPrefix(prefix: string, topology: RedisTopology): string {
  return topology.kind === 'cluster' ? `{${prefix}}` : prefix;
}
