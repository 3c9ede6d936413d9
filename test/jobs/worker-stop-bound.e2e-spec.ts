// A worker's close is bounded (issue 36, item 17): SIGTERM while its Redis stops answering (a partition,
// a connection left waiting after failovers) must still end the process, within JOB_TIME_LIMIT_SECONDS
// + SHUTDOWN_GRACE_SECONDS, with a log line saying the close was cut.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../support/dist-build';
import { killAllWorkers, pollUntil, sleep, spawnWorker } from '../support/processes';
import { TcpProxy } from '../support/tcp-proxy';

describe('the bound on a worker close', () => {
  let dir: string;
  let proxy: TcpProxy;

  beforeAll(async () => {
    ensureBuilt('dist/src/worker.js');
    dir = await mkdtemp(join(tmpdir(), 'mj-stop-bound-'));
    proxy = await TcpProxy.start(6379);
  });
  afterAll(async () => {
    await killAllWorkers();
    proxy?.resume();
    await proxy?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('SIGTERM with Redis not answering: the worker exits at its bound, saying so', async () => {
    const logFile = join(dir, 'worker.log');
    const worker = spawnWorker(
      {
        REGION: 'stop-bound',
        STORAGE_DIR: dir,
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        JOB_TIME_LIMIT_SECONDS: '2',
        SHUTDOWN_GRACE_SECONDS: '1',
        LOG_LEVEL: 'info',
      },
      { logFile },
    );
    await pollUntil(
      'the worker to start',
      async () => {
        worker.assertAlive();
        return (await readFile(logFile, 'utf8').catch(() => '')).includes('mediajobs worker started');
      },
      30_000,
    );
    proxy.stall();
    const signalled = Date.now();
    process.kill(worker.pid, 'SIGTERM');
    const exit = await Promise.race([worker.exited, sleep(15_000).then(() => null)]);
    const exitMs = Date.now() - signalled;
    process.stdout.write(`worker exited ${exitMs} ms after SIGTERM with Redis stalled: ${JSON.stringify(exit)}\n`);
    const log = await readFile(logFile, 'utf8');
    // The close waits on Redis (without the bound it was still waiting 15 s later): cut at 2 + 1 s.
    expect(exit).toEqual({ code: 1, signal: null });
    expect(exitMs).toBeLessThan(3000 + 2000);
    expect(log).toContain('the worker did not close within its bound');
  }, 60_000);
});
