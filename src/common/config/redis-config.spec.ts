import { redisOptions } from '../redis/redis.module';
import { redactSecrets } from '../secret-names';
import { ConfigError, parseConfig } from './config';

describe('Redis topology: REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS', () => {
  test('unset: the single node of REDIS_URL, keys under the plain prefix', () => {
    const config = parseConfig({ REDIS_URL: 'redis://10.0.0.5:6380' });
    expect(config.redisTopology).toEqual({ kind: 'single' });
    expect(config.redisPrefix).toBe('mj');
  });

  test('a cluster: its nodes, and the prefix becomes a hash tag so every key shares one slot', () => {
    const config = parseConfig({
      REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001,[::1]:7002',
      REDIS_PREFIX: 'prod',
    });
    expect(config.redisTopology).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
    expect(config.redisPrefix).toBe('{prod}');
  });

  test('sentinels with the master name they monitor', () => {
    const config = parseConfig({ REDIS_SENTINELS: '10.0.0.1:26379,10.0.0.2:26379', REDIS_SENTINEL_NAME: 'mymaster' });
    expect(config.redisTopology).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
      ],
      name: 'mymaster',
      password: undefined,
    });
    expect(config.redisPrefix).toBe('mj');
  });

  test("REDIS_SENTINEL_PASSWORD is the sentinels' password, and a log line never shows it", () => {
    const config = parseConfig({
      REDIS_SENTINELS: '10.0.0.1:26379',
      REDIS_SENTINEL_NAME: 'mymaster',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    });
    expect(config.redisTopology).toMatchObject({ kind: 'sentinel', password: 'sentinel-secret' });
    expect(JSON.stringify(redactSecrets(config))).not.toContain('sentinel-secret');
    expect(JSON.stringify(redactSecrets(redisOptions(config, 'api')))).not.toContain('sentinel-secret');
  });

  test('bad combinations and values stop start-up naming the variable', () => {
    const cases: [Record<string, string>, string][] = [
      [
        { REDIS_CLUSTER_NODES: '10.0.0.1:7000', REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'm' },
        'Set REDIS_CLUSTER_NODES or REDIS_SENTINELS, not both: a Redis Cluster does its own failover.',
      ],
      [
        { REDIS_SENTINELS: '10.0.0.1:26379' },
        'REDIS_SENTINELS needs REDIS_SENTINEL_NAME (the master name the sentinels monitor).',
      ],
      [
        { REDIS_SENTINEL_NAME: 'mymaster' },
        'REDIS_SENTINEL_NAME is set without REDIS_SENTINELS (comma-separated host:port).',
      ],
      [
        { REDIS_SENTINEL_PASSWORD: 'sentinel-secret' },
        'REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS (comma-separated host:port).',
      ],
      [
        { REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'my master' },
        'REDIS_SENTINEL_NAME must be 1-64 characters of A-Z, a-z, 0-9, ., _ and -; got "my master".',
      ],
      [
        { REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2' },
        'REDIS_CLUSTER_NODES must be comma-separated host:port pairs (e.g. 10.0.0.1:7000,10.0.0.2:7000); got "10.0.0.2".',
      ],
      [
        { REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000' },
        'REDIS_CLUSTER_NODES must be comma-separated host:port pairs (e.g. 10.0.0.1:7000,10.0.0.2:7000); got "redis://10.0.0.1:7000".',
      ],
      [
        { REDIS_SENTINELS: '10.0.0.1:99999', REDIS_SENTINEL_NAME: 'm' },
        'REDIS_SENTINELS must be comma-separated host:port pairs (e.g. 10.0.0.1:7000,10.0.0.2:7000); got "10.0.0.1:99999".',
      ],
      [
        { REDIS_CLUSTER_NODES: '10.0.0.1:7000', REDIS_URL: 'redis://:secret@10.0.0.1:7000/2' },
        'REDIS_CLUSTER_NODES: a Redis Cluster has database 0 only; REDIS_URL names /2.',
      ],
    ];
    for (const [env, message] of cases) expect(() => parseConfig(env)).toThrow(new ConfigError(message));
  });

  test("REDIS_URL's password and database 0 are accepted beside a cluster", () => {
    const config = parseConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000', REDIS_URL: 'rediss://app:secret@ignored:1/0' });
    expect(config.redisTopology.kind).toBe('cluster');
  });
});
