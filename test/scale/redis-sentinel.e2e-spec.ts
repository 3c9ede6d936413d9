// Redis Sentinel under the queue (issue 28): the real API and a worker on a private master + replica
// watched by three sentinels (REDIS_SENTINELS, REDIS_SENTINEL_NAME), and the master SIGKILLed while jobs
// run. The sentinels promote the replica and every client follows it; every job ends, none is lost or
// charged twice, and the API — its rate limiter on every request — answers again. The sentinels require a
// password (REDIS_SENTINEL_PASSWORD, issue 36 item 9): without it anyone who reaches one could re-point
// the master and receive the service's AUTH and traffic.
import { Redis } from 'ioredis';
import {
  expectNothingLost,
  JOBS,
  jobsThroughFailover,
  startOnRedis,
  type FailoverRun,
} from '../support/redis-failover';
import { pollUntil } from '../support/processes';
import { PrivateSentinels, redisCli } from '../support/redis-topologies';

const SENTINEL_PASSWORD = 'sentinel-test-password';

/** A client of one sentinel, as someone on the network would open it. */
function sentinelClient(port: number, password?: string): Redis {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    password,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  return client;
}

describe('Redis Sentinel: the master lost mid-run', () => {
  let deployment: PrivateSentinels;
  let run: FailoverRun | undefined;

  beforeAll(async () => {
    deployment = await PrivateSentinels.start({ sentinelPassword: SENTINEL_PASSWORD });
    run = await startOnRedis('sentinel', {
      REDIS_SENTINELS: deployment.sentinelList,
      REDIS_SENTINEL_NAME: PrivateSentinels.MASTER_NAME,
      REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
    });
  }, 60_000);

  afterAll(async () => {
    await run?.close();
    await deployment?.dispose();
  }, 30_000);

  it('the service reaches the master the sentinels name', async () => {
    // The worker's heartbeat is on the master (a replica refuses writes).
    const keys = await pollUntil(
      'the worker to announce itself on the master',
      async () => {
        const found = await redisCli(
          deployment.master,
          '--scan',
          '--pattern',
          `${run!.api.config.redisPrefix}:workers:*`,
        );
        return found || undefined;
      },
      15_000,
    );
    expect(keys).toContain(':workers:sentinel');
  });

  it('a client without the password is refused by every sentinel: it can neither ask for the master nor move it', async () => {
    for (const port of deployment.sentinels) {
      const stranger = sentinelClient(port);
      try {
        await expect(
          stranger.call('sentinel', 'get-master-addr-by-name', PrivateSentinels.MASTER_NAME),
        ).rejects.toThrow(/NOAUTH/);
        await expect(stranger.call('sentinel', 'failover', PrivateSentinels.MASTER_NAME)).rejects.toThrow(/NOAUTH/);
      } finally {
        stranger.disconnect();
      }
    }
    const known = sentinelClient(deployment.sentinels[0], SENTINEL_PASSWORD);
    try {
      const [, port] = (await known.call(
        'sentinel',
        'get-master-addr-by-name',
        PrivateSentinels.MASTER_NAME,
      )) as string[];
      expect(Number(port)).toBe(deployment.master);
    } finally {
      known.disconnect();
    }
  });

  it(`${JOBS} jobs through a failover: all end, none lost or charged twice`, async () => {
    const oldMaster = deployment.master;
    const outcome = await jobsThroughFailover(run!, async () => {
      await deployment.kill(oldMaster);
      await pollUntil(
        'the sentinels to promote the replica',
        async () => (await deployment.currentMaster()) === deployment.replica,
        30_000,
        200,
      );
    });
    expect(await deployment.currentMaster()).toBe(deployment.replica);
    expectNothingLost(outcome);
  }, 120_000);
});
