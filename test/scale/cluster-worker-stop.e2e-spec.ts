// A worker's SIGTERM after two Redis Cluster failovers (issue 36, item 17): once, a worker went on
// beating and took three new jobs 95 s after its SIGTERM. The real worker process (src/worker.ts, as
// production runs it) on a private cluster whose queue master is lost twice (each time the replica
// takes over and the lost node comes back as its replica); the worker still runs jobs after both, then
// on SIGTERM it exits within its bound (JOB_TIME_LIMIT_SECONDS + SHUTDOWN_GRACE_SECONDS) and takes no
// job submitted after the signal.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workersKey } from '../../src/queues/keys';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { ensureBuilt } from '../support/dist-build';
import { upload, waitForJob } from '../support/jobs';
import { killAllWorkers, pollUntil, sleep, spawnWorker } from '../support/processes';
import { PrivateRedisCluster, redisCli } from '../support/redis-topologies';

const BOUND_SECONDS = 30 + 5;

describe('Redis Cluster: a worker stopped after two failovers', () => {
  let cluster: PrivateRedisCluster;
  let api: TestApi;
  let dir: string;

  beforeAll(async () => {
    ensureBuilt('dist/src/worker.js');
    dir = await mkdtemp(join(tmpdir(), 'mj-cluster-stop-'));
    cluster = await PrivateRedisCluster.start();
    api = await startApi({ REGION: 'cluster-stop', STORAGE_DIR: dir, REDIS_CLUSTER_NODES: cluster.nodes });
  }, 120_000);
  afterAll(async () => {
    await killAllWorkers();
    await api?.close();
    await cluster?.dispose();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  /** Submits (a 503 while the region has no heartbeat or Redis fails over is asked again); the job's path. */
  async function submit(account: TestAccount, uploadId: string): Promise<string> {
    const submitted = await pollUntil(
      'the submit to be accepted',
      async () => {
        const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }] },
        });
        return response.status === 503 ? undefined : response;
      },
      60_000,
      200,
    );
    expect(submitted.status).toBe(202);
    return `/v1/sdr2hdr/jobs/${submitted.body.job_id}`;
  }

  /** The queue's master SIGKILLed, its replica promoted, the lost node back as the new master's replica. */
  async function failover(): Promise<void> {
    const prefix = api.config.redisPrefix;
    const lost = (await cluster.masterOf(prefix))!;
    await cluster.kill(lost);
    await pollUntil(
      'a replica to take the slot over',
      async () => ((await cluster.masterOf(prefix)) ?? lost) !== lost,
      30_000,
    );
    await cluster.restart(lost);
    await pollUntil(
      'the lost node to replicate the new master',
      async () => (await redisCli(lost, 'info', 'replication')).includes('master_link_status:up'),
      30_000,
    );
  }

  it(`SIGTERM after two failovers: the worker exits within ${BOUND_SECONDS} s and takes no new job`, async () => {
    const logFile = join(dir, 'worker.log');
    const worker = spawnWorker(
      {
        REGION: 'cluster-stop',
        STORAGE_DIR: dir,
        REDIS_CLUSTER_NODES: cluster.nodes,
        PUBLIC_BASE_URL: api.config.publicBaseUrl,
        DOCS_URL: api.config.docsUrl,
        JOB_TIME_LIMIT_SECONDS: '30',
        SHUTDOWN_GRACE_SECONDS: '5',
        LOG_LEVEL: 'info',
      },
      { logFile },
    );
    const account = await createAccount(api, { credits: 100 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90 }));
    expect(await waitForJob(api, account.apiKey, await submit(account, uploadId), undefined, 60_000)).toMatchObject({
      status: 'succeeded',
    });

    await failover();
    await failover();
    // Its consumer came through both: a job submitted now runs.
    expect(await waitForJob(api, account.apiKey, await submit(account, uploadId), undefined, 60_000)).toMatchObject({
      status: 'succeeded',
    });
    worker.assertAlive();

    // Another worker of the region beats on (its heartbeat only): the API keeps accepting the region's submits
    // after this worker leaves the worker set on its way out, as in a fleet. Without it the late submit raced
    // that farewell, and lost it on a loaded machine (503 region_unavailable until the 60 s ran out).
    const workers = workersKey(api.config, 'cluster-stop');
    const master = (await cluster.masterOf(workers))!;
    await redisCli(master, '-c', 'zadd', workers, String(Date.now() + 3_600_000), 'another-worker-of-the-region');

    const signalled = Date.now();
    process.kill(worker.pid, 'SIGTERM');
    const late = await submit(account, uploadId);
    const exit = await Promise.race([worker.exited, sleep((BOUND_SECONDS + 5) * 1000).then(() => null)]);
    const exitMs = Date.now() - signalled;
    process.stdout.write(`worker exited ${exitMs} ms after SIGTERM (after two failovers): ${JSON.stringify(exit)}\n`);
    const log = await readFile(logFile, 'utf8');
    expect({ exited: exit !== null, log: exit ? '' : log.slice(-3000) }).toEqual({ exited: true, log: '' });
    expect(exitMs).toBeLessThan(BOUND_SECONDS * 1000);
    // The job submitted after the signal was never taken: still queued, no worker on its item.
    await sleep(1000);
    const job = (await call(api, 'GET', late, { key: account.apiKey })).body;
    expect(job).toMatchObject({ status: 'queued', items: [{ status: 'queued', worker: null }] });
  }, 300_000);
});
