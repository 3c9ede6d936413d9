// Redis Sentinel under the queue (issue 28): the real API and a worker on a private master + replica
// watched by three sentinels (REDIS_SENTINELS, REDIS_SENTINEL_NAME), and the master SIGKILLed while jobs
// run. The sentinels promote the replica and every client follows it; every job ends, none is lost or
// charged twice, and the API — its rate limiter on every request — answers again.
import {
  expectNothingLost,
  JOBS,
  jobsThroughFailover,
  startOnRedis,
  type FailoverRun,
} from '../support/redis-failover';
import { pollUntil } from '../support/processes';
import { PrivateSentinels, redisCli } from '../support/redis-topologies';

describe('Redis Sentinel: the master lost mid-run', () => {
  let deployment: PrivateSentinels;
  let run: FailoverRun | undefined;

  beforeAll(async () => {
    deployment = await PrivateSentinels.start();
    run = await startOnRedis('sentinel', {
      REDIS_SENTINELS: deployment.sentinelList,
      REDIS_SENTINEL_NAME: PrivateSentinels.MASTER_NAME,
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
