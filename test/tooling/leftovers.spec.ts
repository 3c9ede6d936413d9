// What a killed test run leaves behind — a spawned worker still running, its databases — is removed by
// the next run's global set-up (scripts/leftovers.js), and what a live run owns is left alone.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { adminQuery } from '../support/global-setup';
import { pollUntil } from '../support/processes';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by scripts/test.js
const { killLeftoverProcesses, dropLeftoverDatabases } = require('../../scripts/leftovers.js') as {
  killLeftoverProcesses(ownedBy?: number): number;
  dropLeftoverDatabases(ownedBy?: number): Promise<string[]>;
};

/** Alive and not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function databases(): Promise<string[]> {
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    return (await admin.query<{ datname: string }>('SELECT datname FROM pg_database')).rows.map((row) => row.datname);
  } finally {
    await admin.end();
  }
}

describe('leftovers of a killed test run', () => {
  const started: ChildProcess[] = [];
  const made: string[] = [];
  const sleeper = (env: Record<string, string>): number => {
    const { TEST_RUN_PID: _run, DATABASE_URL: _url, ...rest } = process.env;
    const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore', env: { ...rest, ...env } });
    started.push(child);
    return child.pid!;
  };

  afterAll(async () => {
    for (const child of started) child.kill('SIGKILL');
    for (const name of made) await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  it('are removed — its worker processes and databases — while a live run keeps its own', async () => {
    // A run whose owner is gone (its pid belongs to no process) and one whose owner is alive.
    const dead = spawnSync('true').pid!;
    const live = sleeper({});
    const deadDatabases = [`mediajobs_test_${dead}`, `mediajobs_test_${dead}_w2`];
    const liveDatabase = `mediajobs_test_${live}_w1`;
    for (const name of [...deadDatabases, liveDatabase]) {
      made.push(name);
      await adminQuery(`CREATE DATABASE "${name}"`);
    }
    const deadWorker = sleeper({ TEST_RUN_PID: String(dead) });
    // A worker of a run from before TEST_RUN_PID: known by the database its DATABASE_URL names.
    const olderWorker = sleeper({ DATABASE_URL: `postgres://postgres@127.0.0.1:5432/mediajobs_test_${dead}_w1` });
    const liveWorker = sleeper({ TEST_RUN_PID: String(live) });

    expect(killLeftoverProcesses()).toBeGreaterThanOrEqual(2);
    expect(await dropLeftoverDatabases()).toEqual(expect.arrayContaining(deadDatabases));

    await pollUntil(
      'the dead run’s workers to be gone',
      () => (!isRunning(deadWorker) && !isRunning(olderWorker)) || undefined,
      5000,
      50,
    );
    expect(isRunning(liveWorker)).toBe(true);
    expect(isRunning(live)).toBe(true);
    const left = await databases();
    expect(left).toContain(liveDatabase);
    expect(left.filter((name) => deadDatabases.includes(name))).toEqual([]);
  });
});
