// Redis Cluster under the queue (issue 28): the real API and a worker on a private 3-master +
// 3-replica cluster (REDIS_CLUSTER_NODES), and the master holding the service's slot SIGKILLed while
// jobs run. Its replica takes over; every job ends, none is lost or charged twice, and the API — its
// rate limiter on every request — answers again.
import { Cluster } from 'ioredis';
import { PrivateRedisCluster, redisCli } from '../support/redis-topologies';
import { JOBS, jobsThroughFailover, startOnRedis, type FailoverRun } from '../support/redis-failover';
import { pollUntil } from '../support/processes';

describe('Redis Cluster: a master lost mid-run', () => {
  let cluster: PrivateRedisCluster;
  let run: FailoverRun | undefined;

  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start();
  }, 60_000);

  afterAll(async () => {
    await run?.close();
    await cluster?.dispose();
  }, 30_000);

  it('every key of the service is in one slot, served by one master', async () => {
    run = await startOnRedis('cluster', { REDIS_CLUSTER_NODES: cluster.nodes });
    const prefix = run.api.config.redisPrefix;
    expect(prefix).toMatch(/^\{.+\}$/);
    // What the worker and API wrote at start-up (heartbeat, regions; BullMQ's queue meta) is all under
    // the hash tag: one slot, so no multi-key command or queue script can meet CROSSSLOT.
    const client = new Cluster(
      cluster.nodes.split(',').map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
    );
    try {
      const keys = await pollUntil(
        'the worker to announce itself',
        async () => {
          const master = (await cluster.masterOf(prefix))!;
          const found = (await redisCli(master, '--scan', '--pattern', `${prefix}*`)).split('\n').filter(Boolean);
          return found.some((key) => key.includes(':workers:')) ? found : undefined;
        },
        15_000,
      );
      expect(keys.length).toBeGreaterThan(1);
      expect(new Set(await Promise.all(keys.map((key) => client.cluster('KEYSLOT', key)))).size).toBe(1);
    } finally {
      client.disconnect();
    }
  }, 30_000);

  it(`${JOBS} jobs through the loss of the queue's master: all end, none lost or charged twice`, async () => {
    const prefix = run!.api.config.redisPrefix;
    let killed = 0;
    const outcome = await jobsThroughFailover(run!, async () => {
      killed = (await cluster.masterOf(prefix))!;
      await cluster.kill(killed);
      // The replica is promoted once the others judge the master failed (cluster-node-timeout 1 s).
      await pollUntil(
        'a replica to take the slot over',
        async () => ((await cluster.masterOf(prefix)) ?? killed) !== killed,
        30_000,
        200,
      );
    });
    expect(killed).toBeGreaterThan(0);
    expect(outcome.jobs.map((job) => job.status)).toEqual(Array(JOBS).fill('succeeded'));
    expect(outcome.money.problems).toEqual([]);
    // The failover was felt (some requests refused or slow) or not, but after it the API answers, rate limiter included.
    expect(outcome.after.status).toBe(200);
    expect(outcome.after.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(Number(outcome.after.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
    // Refusals during the failover are 503 envelopes, never a 500.
    expect(outcome.duringFailover.filter((status) => status !== 200 && status !== 503)).toEqual([]);
  }, 120_000);
});
