// A PostgreSQL cluster and a redis-server of one benchmark's own, on loopback ports of its own, so their
// whole statistics (pg_stat_statements, pg_stat_database, INFO commandstats) and CPU are the run's
// alone — the machine's own PostgreSQL (5432) and Redis (6379) are never touched. The cluster is
// Debian's `pg_createcluster`, as the chaos tests' (test/support/processes.ts PrivateCluster), with
// pg_stat_statements preloaded.
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { freePort, sleep } from './processes';

const exec = promisify(execFile);
const PG_VERSION = '15';
const PREFIX = 'mjcap_';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Clusters left by a capacity run that died before it could drop them. */
async function dropStaleClusters(): Promise<void> {
  const { stdout } = await exec('pg_lsclusters', ['--no-header']).catch(() => ({ stdout: '' }));
  for (const line of stdout.split('\n')) {
    const [version, name] = line.trim().split(/\s+/);
    const pid = Number(new RegExp(`^${PREFIX}(\\d+)$`).exec(name ?? '')?.[1]);
    if (!pid || pid === process.pid || isAlive(pid)) continue;
    await exec('pg_dropcluster', ['--stop', version, name]).catch(() => undefined);
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:port (no database: createEnvironment adds it). */
  url: string;
  /** The postmaster's pid: its children are the backends whose CPU is PostgreSQL's. */
  postmasterPid(): Promise<number>;
  drop(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  await dropStaleClusters();
  const name = `${PREFIX}${process.pid}`;
  const port = await freePort();
  await exec('pg_dropcluster', ['--stop', PG_VERSION, name]).catch(() => undefined);
  await exec(
    'pg_createcluster',
    [
      PG_VERSION,
      name,
      '-p',
      String(port),
      '-o',
      'shared_preload_libraries=pg_stat_statements',
      '-o',
      'pg_stat_statements.track=all',
      '-o',
      'max_connections=300',
      '--start',
      '--',
      '--auth=trust',
    ],
    // Debian's clusters listen on localhost alone by default: loopback only.
    { timeout: 120_000 },
  );
  const url = `postgres://postgres@127.0.0.1:${port}`;
  await until(`cluster ${name}`, async () => {
    const client = new Client({ connectionString: `${url}/postgres`, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      // The statistics view where the meter reads it (the database under measure creates its own too).
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  });
  return {
    url,
    postmasterPid: async () =>
      Number((await readFile(`/var/lib/postgresql/${PG_VERSION}/${name}/postmaster.pid`, 'utf8')).split('\n')[0]),
    drop: async () => {
      await exec('pg_dropcluster', ['--stop', PG_VERSION, name], { timeout: 60_000 });
    },
  };
}

export interface PrivateRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** redis-server without persistence (the queue's cost is its commands, not this machine's disk). */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = `redis://127.0.0.1:${port}`;
  await until('redis-server', async () => {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined); // not listening yet: connect() rejects, we try again
    try {
      await redis.connect();
      return (await redis.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      redis.disconnect();
    }
  });
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
