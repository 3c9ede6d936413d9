// Benchmark: the fair share of a region's workers (issue 37, src/queues/fair-share.ts) against plain
// first-in-first-out in the same run, on the real Redis with BullMQ consumers. Four accounts submit
// backlogs of 100, 20, 5 and 1 tiny items in that order (the noisiest first) to 2 workers; each
// account's first item's wait and its share of the worker time while the queue is contended. Then the
// cost: items/s of the fair dispatcher (its enqueue script and BullMQ's prioritized set) against the
// plain queue with items that do nothing, alternating rounds: added while the workers run (the ratio),
// and taken alone once all are queued (details.dispatch_only).
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { parseConfig, type AppConfig } from '../src/common/config/config';
import { mediaQueueName, type MediaJobData } from '../src/queues/catalogue';
import type { UnitSink } from '../src/queues/driver';
import { BullMqDriver } from '../src/queues/drivers/bullmq.driver';
import { bullConnection } from '../src/queues/drivers/bullmq-connection';
import { enqueueMediaItems } from '../src/queues/enqueue';
import { QueueOwner } from '../src/queues/queue-owner';
import { createEnvironment } from './lib/environment';
import { sleep } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { alternate, median, round } from './lib/stats';

/** Backlogs in the order they are submitted: the biggest first, as a noisy neighbour would. */
const BACKLOGS = [100, 20, 5, 1];
const WORKERS = 2;
/** A tiny item's work (a worker slot held this long). */
const ITEM_MS = 20;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

type Mode = 'fair' | 'fifo';
interface Taken {
  account: string;
  startedAt: number;
  endedAt: number;
}

/** Starts `WORKERS` consumers of the region's queue, each one item at a time, noting whose each item was. */
function consumers(config: AppConfig, region: string, workMs: number, concurrency = 1) {
  const taken: Taken[] = [];
  const workers = range(WORKERS).map(
    () =>
      new Worker<MediaJobData>(
        mediaQueueName(region),
        async (job) => {
          const startedAt = Date.now();
          if (workMs) await sleep(workMs);
          taken.push({ account: job.data.account ?? '?', startedAt, endedAt: Date.now() });
        },
        { connection: bullConnection(config, 'worker'), prefix: config.redisPrefix, concurrency },
      ),
  );
  return {
    taken,
    async until(count: number): Promise<void> {
      const deadline = Date.now() + 600_000;
      while (taken.length < count) {
        if (Date.now() > deadline) throw new Error(`fairness: ${taken.length} of ${count} items ran`);
        await sleep(10);
      }
    },
    close: () => Promise.all(workers.map((worker) => worker.close())),
  };
}

export async function benchFairness(context: BenchContext): Promise<BenchResult> {
  const env = await createEnvironment('fairness');
  const config = parseConfig({ ...env.serviceEnv, LOG_LEVEL: 'warn' });
  const redis = new Redis(env.redisUrl);
  const driver = new BullMqDriver(config);
  const owner = new QueueOwner(config, driver, redis);
  const sinkOf = (mode: Mode, region: string): UnitSink<'media'> =>
    mode === 'fair'
      ? owner.sink('media', 'producer', region)
      : { add: (units) => driver.add('media', 'producer', region, units) };
  let regions = 0;

  /** One contended run: the four backlogs on 2 busy workers. */
  async function contended(mode: Mode) {
    const region = `fair-${mode}-${regions++}`;
    const sink = sinkOf(mode, region);
    const workers = consumers(config, region, ITEM_MS);
    const submittedAt = Date.now();
    for (const backlog of BACKLOGS) {
      await enqueueMediaItems(sink, `job_${mode}_${backlog}`, range(backlog), { account: `a${backlog}`, plan: 'pro' });
    }
    const total = BACKLOGS.reduce((sum, n) => sum + n, 0);
    await workers.until(total);
    await workers.close();
    return { submittedAt, taken: [...workers.taken].sort((x, y) => x.startedAt - y.startedAt) };
  }

  try {
    context.log('fairness: contended runs (fair, then first-in-first-out)');
    const fair = await contended('fair');
    const fifo = await contended('fifo');
    // The contended window: until the last item of the three smaller backlogs in the fair run (while
    // the 100-item account still waits too); both runs are measured over that many items.
    const small = (account: string) => account !== `a${BACKLOGS[0]}`;
    const window = fair.taken.reduce((last, item, index) => (small(item.account) ? index + 1 : last), 0);
    const describe = (run: typeof fair) =>
      Object.fromEntries(
        BACKLOGS.map((backlog) => {
          const account = `a${backlog}`;
          const first = run.taken.find((item) => item.account === account);
          const inWindow = run.taken.slice(0, window);
          const busy = (items: Taken[]) => items.reduce((sum, item) => sum + item.endedAt - item.startedAt, 0);
          const share = busy(inWindow.filter((item) => item.account === account)) / busy(inWindow);
          return [
            `${backlog} items`,
            { first_wait_ms: first ? first.startedAt - run.submittedAt : null, worker_share: round(share, 3) },
          ];
        }),
      );

    context.log('fairness: throughput rounds (items that do nothing)');
    const items = context.quick ? 400 : 2000;
    const rounds = context.quick ? 1 : 3;
    /** Adds (four accounts, jobs of 20 items, interleaved) while the workers run; also the take alone. */
    const throughput = async (mode: Mode) => {
      const enqueueAll = async (sink: UnitSink<'media'>, tag: string) => {
        for (let job = 0; job < items / 80; job++) {
          await Promise.all(
            range(4).map((a) =>
              enqueueMediaItems(sink, `job_${tag}${a}_${job}`, range(20), { account: `t${a}`, plan: 'pro' }),
            ),
          );
        }
      };
      const region = `fair-tp-${mode}-${regions++}`;
      let workers = consumers(config, region, 0, 4);
      let started = Date.now();
      await enqueueAll(sinkOf(mode, region), 'e');
      await workers.until(items);
      const endToEnd = items / ((Date.now() - started) / 1000);
      await workers.close();
      // The dispatch alone: everything queued first, then taken.
      const queued = `fair-tpd-${mode}-${regions++}`;
      await enqueueAll(sinkOf(mode, queued), 'd');
      started = Date.now();
      workers = consumers(config, queued, 0, 4);
      await workers.until(items);
      const dispatch = items / ((Date.now() - started) / 1000);
      await workers.close();
      return { endToEnd, dispatch };
    };
    const runs = await alternate(
      rounds,
      () => throughput('fair'),
      () => throughput('fifo'),
    );
    const ours = runs.ours.map((run) => run.endToEnd);
    const bare = runs.bare.map((run) => run.endToEnd);
    const dispatchOnly = {
      fair_items_per_s: runs.ours.map((run) => round(run.dispatch)),
      plain_items_per_s: runs.bare.map((run) => round(run.dispatch)),
      ratio: round(median(runs.ours.map((run) => run.dispatch)) / median(runs.bare.map((run) => run.dispatch)), 3),
    };
    return compare(
      'fairness',
      `4 accounts with backlogs ${BACKLOGS.join('/')} of ${ITEM_MS} ms items on ${WORKERS} workers: first item's wait and share of worker time, fair share vs first-in-first-out; throughput of ${items} no-op items, fair vs plain queue`,
      { metric: 'items/s', ours, bare, higherIsBetter: true },
      { text: 'fair ÷ plain items/s ≥ 0.95', met: (ratio) => ratio >= 0.95 },
      {
        contended_window_items: window,
        fair: describe(fair),
        fifo: describe(fifo),
        item_ms: ITEM_MS,
        dispatch_only: dispatchOnly,
        workers: WORKERS,
      },
    );
  } finally {
    await owner.onApplicationShutdown();
    redis.disconnect();
    await env.close();
  }
}
