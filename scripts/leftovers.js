// What a killed test run leaves behind, and its removal: by the next run (Jest's globalSetup,
// test/support/global-setup.ts) and by a run's own runner at its end (scripts/test.js). A run is known by
// the pid of the process that owns it (TEST_RUN_PID, test/support/test-env.ts): its databases are named
// `mediajobs_test_<pid>…`, and every process it starts (Jest workers, spawned service workers, their ffmpeg
// children, private servers) carries TEST_RUN_PID in its environment — or, for runs older than
// TEST_RUN_PID, a DATABASE_URL naming `mediajobs_test_<pid>`. Only what belongs to a run whose owner is gone
// (or to the run named by `ownedBy`) is removed: other runs on the machine are left alone.
'use strict';

const { readdirSync, readFileSync } = require('node:fs');
const { Client } = require('pg');

const RUN_DATABASE = /^mediajobs_test_(\d+)/;

/** True while a process with this pid exists (EPERM: it exists but belongs to another user). */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Whether what run `run` left may go: it is `ownedBy`'s, or (without `ownedBy`) its owner is gone. */
function removable(run, ownedBy) {
  if (!run) return false;
  if (ownedBy !== undefined) return run === ownedBy;
  return run !== process.pid && !isAlive(run);
}

/** The run a process belongs to, from its environment (undefined: not a test process, or not readable). */
function runOf(pid) {
  let environ;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined; // gone, or another user's
  }
  const vars = environ.split('\0');
  const owner = vars.find((entry) => entry.startsWith('TEST_RUN_PID='));
  if (owner) return Number(owner.slice('TEST_RUN_PID='.length)) || undefined;
  const url = vars.find((entry) => entry.startsWith('DATABASE_URL='));
  const match = url ? RUN_DATABASE.exec(url.slice(url.lastIndexOf('/') + 1)) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * SIGKILLs every process of a finished run (see `removable`), never this process itself. Returns how
 * many. Linux only (/proc); elsewhere nothing is found.
 */
function killLeftoverProcesses(ownedBy) {
  let pids;
  try {
    pids = readdirSync('/proc')
      .map(Number)
      .filter((pid) => pid > 1 && pid !== process.pid);
  } catch {
    return 0;
  }
  let killed = 0;
  for (const pid of pids) {
    if (!removable(runOf(pid), ownedBy)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // already gone
    }
  }
  return killed;
}

/** Drops the test databases of finished runs (see `removable`). Returns their names. */
async function dropLeftoverDatabases(ownedBy) {
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  const dropped = [];
  try {
    const { rows } = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'mediajobs\\_test\\_%'");
    for (const { datname } of rows) {
      if (!removable(Number(RUN_DATABASE.exec(datname)?.[1]), ownedBy)) continue;
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
      dropped.push(datname);
    }
  } finally {
    await admin.end();
  }
  return dropped;
}

module.exports = { killLeftoverProcesses, dropLeftoverDatabases, isAlive };
