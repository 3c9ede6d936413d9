// The real API and worker processes (from a snapshot of the built app, test/support/processes.ts)
// sharing one storage folder: for tests where a job's items or segments spread over several workers.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { workersKey } from '../../src/queues/keys';
import { groupProcesses, killAllWorkers, pollUntil, snapshotApp, spawnWorker, type WorkerProcess } from './processes';
import { startApi, type TestApi } from './app';

export interface WorkerFleet {
  /** The fleet's own folder: storage/ and the workers' temp folders and logs are under it. */
  dir: string;
  /** The snapshot of the built app that worker processes run (spawnWorker's `app`). */
  app: string;
  api: TestApi;
  redis: Redis;
  db: DataSource;
  /**
   * Two worker processes of `region` (a and b), one unit of work at a time each, a dead one's work taken
   * over within seconds; resolves with their ids once both announced themselves.
   */
  twoWorkers(region: string, env?: Record<string, string>): Promise<{ workers: WorkerProcess[]; ids: string[] }>;
  /**
   * The environment of a worker process of `region` that shares the API's storage, links and docs, a
   * dead one's work taken over within seconds; `env` adds to it or overrides it.
   */
  workerEnv(region: string, env?: Record<string, string>): Record<string, string>;
  /** What `pattern`'s first group captures in the ffmpeg processes of `worker`'s group now (the work folder names item and segment). */
  ffmpegRunning(worker: WorkerProcess, pattern: RegExp): Promise<number[]>;
  /** The outbox events written for `jobId`. */
  outboxEvents(jobId: string): Promise<string[]>;
  /** Kills every worker, then closes the API and removes the folder. */
  close(): Promise<void>;
}

/** `apiEnv` adds to the API's environment (REGION, say). */
export async function startWorkerFleet(name: string, apiEnv: Record<string, string> = {}): Promise<WorkerFleet> {
  const dir = await mkdtemp(join(tmpdir(), `mj-${name}-`));
  const app = await snapshotApp(dir);
  const api = await startApi({ STORAGE_DIR: join(dir, 'storage'), ...apiEnv });
  const redis = new Redis(api.config.redisUrl);
  const db = api.app.get(DataSource);

  const workerEnv = (region: string, env: Record<string, string> = {}): Record<string, string> => ({
    REGION: region,
    STORAGE_DIR: join(dir, 'storage'),
    PUBLIC_BASE_URL: api.config.publicBaseUrl,
    DOCS_URL: api.config.docsUrl,
    // A dead worker's unit is noticed as stalled (BullMQ lock and stall check), and taken again, within seconds.
    WORKER_LOCK_MS: '2000',
    ...env,
  });

  async function startOne(region: string, name: string, env: Record<string, string>): Promise<WorkerProcess> {
    const tmp = join(dir, `tmp-${region}-${name}`);
    await mkdir(tmp);
    return spawnWorker(workerEnv(region, { WORKER_CONCURRENCY: '1', TMPDIR: tmp, ...env }), {
      app,
      logFile: join(dir, `worker-${region}-${name}.log`),
    });
  }

  return {
    dir,
    app,
    api,
    workerEnv,
    redis,
    db,
    async twoWorkers(region, env = {}) {
      const workers: WorkerProcess[] = [];
      const ids: string[] = [];
      for (const name of ['a', 'b']) {
        const worker = await startOne(region, name, env);
        workers.push(worker);
        // Each worker announces its id in the region's worker set at start-up: the new member is this one's.
        const id = await pollUntil(
          `worker ${name} of ${region} to announce itself`,
          async () => {
            worker.assertAlive();
            const members = await redis.zrange(workersKey(api.config, region), 0, -1);
            return members.find((member) => !ids.includes(member));
          },
          60_000,
          100,
        );
        ids.push(id);
      }
      return { workers, ids };
    },
    async ffmpegRunning(worker, pattern) {
      return (await groupProcesses(worker.pid))
        .filter((process) => process.comm === 'ffmpeg')
        .map((process) => pattern.exec(process.args)?.[1])
        .filter((captured): captured is string => captured !== undefined)
        .map(Number);
    },
    async outboxEvents(jobId) {
      const rows: { event: string }[] = await db.query(`SELECT event FROM outbox_events WHERE job_id = $1`, [jobId]);
      return rows.map((row) => row.event);
    },
    async close() {
      await killAllWorkers();
      redis.disconnect();
      await api.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
