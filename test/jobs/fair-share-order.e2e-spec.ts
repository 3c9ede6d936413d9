// The fair share's order of dispatch (issue 37), read from what a real BullMQ consumer on a real Redis
// takes, one unit at a time — no encode: the units are queued the way the fan-out queues them
// (QueueOwner's media sink, enqueueMediaItems) and the consumer only notes whose each one was.
import { Worker } from 'bullmq';
import { parseConfig, type AppConfig } from '../../src/common/config/config';
import { createRedis, type RedisClient } from '../../src/common/redis/redis.module';
import { mediaQueueName, type MediaJobData } from '../../src/queues/catalogue';
import { BullMqDriver } from '../../src/queues/drivers/bullmq.driver';
import { bullConnection } from '../../src/queues/drivers/bullmq-connection';
import { enqueueMediaItems, enqueueMediaJob } from '../../src/queues/enqueue';
import { QueueOwner } from '../../src/queues/queue-owner';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('fair share: the order in which a region’s units are dispatched', () => {
  let config: AppConfig;
  let redis: RedisClient;
  let owner: QueueOwner;

  beforeAll(async () => {
    config = parseConfig({ ...process.env });
    redis = createRedis(config, 'fair-order-test');
    // The API's client fails fast rather than queue commands: wait until it is connected.
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    owner = new QueueOwner(config, new BullMqDriver(config), redis);
  });
  afterAll(async () => {
    await owner.onApplicationShutdown();
    redis.disconnect();
  });

  /** Takes every unit of the region's queue with one consumer of concurrency 1 and returns them in order. */
  async function dispatchOrder(region: string, count: number): Promise<MediaJobData[]> {
    const taken: MediaJobData[] = [];
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const worker = new Worker<MediaJobData>(
      mediaQueueName(region),
      async (job) => {
        taken.push(job.data);
        if (taken.length === count) done();
      },
      { connection: bullConnection(config, 'worker'), prefix: config.redisPrefix, concurrency: 1 },
    );
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        all,
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), 20_000))),
      ]);
    } finally {
      clearTimeout(timer);
      await worker.close();
    }
    return taken;
  }

  it("serves a 1-item account's unit right after another account's first units, not behind its 20", async () => {
    const region = `fair-a-${process.pid}`;
    const sink = owner.sink('media', 'producer', region);
    await enqueueMediaItems(sink, 'job_A', range(20), { account: 'acct_A', plan: 'free' });
    await enqueueMediaItems(sink, 'job_B', [0], { account: 'acct_B', plan: 'free' });

    const order = await dispatchOrder(region, 21);
    const positionOfB = order.findIndex((unit) => unit.account === 'acct_B');
    // FIFO would make it 21st; the fair share serves it within A's first two.
    expect(positionOfB).toBeGreaterThanOrEqual(0);
    expect(positionOfB).toBeLessThanOrEqual(2);
    // A's own items keep their order.
    expect(order.filter((unit) => unit.account === 'acct_A').map((unit) => unit.index)).toEqual(range(20));
  });

  it('interleaves two backlogs by plan weight: enterprise gets about 4 turns for free’s 1, free is not starved', async () => {
    const region = `fair-b-${process.pid}`;
    const sink = owner.sink('media', 'producer', region);
    await enqueueMediaItems(sink, 'job_F', range(12), { account: 'acct_F', plan: 'free' });
    await enqueueMediaItems(sink, 'job_E', range(12), { account: 'acct_E', plan: 'enterprise' });

    const first10 = (await dispatchOrder(region, 24)).slice(0, 10).map((unit) => unit.account);
    const enterprise = first10.filter((account) => account === 'acct_E').length;
    expect(enterprise).toBeGreaterThanOrEqual(6);
    expect(10 - enterprise).toBeGreaterThanOrEqual(2);
  });

  it("a job's fan-out unit is not weighed: it waits in the plain list and goes before every item", async () => {
    const region = `fair-c-${process.pid}`;
    await enqueueMediaItems(owner.sink('media', 'producer', region), 'job_A', range(5), {
      account: 'acct_A',
      plan: 'free',
    });
    await enqueueMediaJob(owner.sink('media', 'producer', region), 'job_C');
    const queue = owner.queue('media', 'producer', region);
    // The queue board and the metrics see it under Waiting; the items wait prioritized.
    expect(await queue.getJobState('job_C')).toBe('waiting');
    expect(await queue.getJobState('job_A.0')).toBe('prioritized');

    const order = await dispatchOrder(region, 6);
    expect(order[0]).toEqual({ jobId: 'job_C' });
  });
});
