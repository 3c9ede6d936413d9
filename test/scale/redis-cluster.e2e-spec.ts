// Redis Cluster under the queue (issue 28): the real API and a worker on a private 3-master +
// 3-replica cluster (REDIS_CLUSTER_NODES), and the master holding the service's slot SIGKILLed while
// jobs run. Its replica takes over; every job ends, none is lost or charged twice, and the API — its
// rate limiter on every request — answers again.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { ensureBuilt } from '../support/dist-build';
import { PrivateRedisCluster, redisCli } from '../support/redis-topologies';
import {
  expectNothingLost,
  JOBS,
  jobsThroughFailover,
  startOnRedis,
  type FailoverRun,
} from '../support/redis-failover';
import { pollUntil } from '../support/processes';

/** How long a closed worker's process may take to end (its last connections' closing handshakes). */
const EXIT_MS = 10_000;

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
    expectNothingLost(outcome);
  }, 120_000);

  // After the failover, so the worker meets the cluster as production may: a master replaced. A
  // process that closes its worker (a test file, an embedding script) must then end by itself: every
  // Redis connection closed, none left reconnecting or refreshing the cluster's slots.
  it(`a worker closed on the cluster leaves nothing running: its process ends within ${EXIT_MS / 1000} s`, async () => {
    ensureBuilt('dist/src/worker.js');
    const storage = await mkdtemp(join(tmpdir(), 'mj-cluster-exit-'));
    const child = spawn(process.execPath, [join(__dirname, '../support/closing-worker.js')], {
      env: { ...process.env, REGION: 'cluster-exit', STORAGE_DIR: storage, REDIS_CLUSTER_NODES: cluster.nodes },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await pollUntil('the worker to start', () => output.includes('started') || child.exitCode !== null, 30_000);
      expect({ output, stderr: output === 'started\n' ? '' : stderr }).toEqual({ output: 'started\n', stderr: '' });
      child.kill('SIGTERM');
      await pollUntil('the worker to close', () => output.includes('close'), 30_000);
      expect(output).toBe('started\nclosed\n');
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exited,
        new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), EXIT_MS))),
      ]);
      clearTimeout(timer);
      // Its stderr shown on failure (a start-up or close error).
      expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    } finally {
      child.kill('SIGKILL');
      await exited;
      await rm(storage, { recursive: true, force: true });
    }
  }, 90_000);
});
