// Once per `jest` run: what killed runs left behind is removed, then the run's database is made fresh
// with every migration applied. That database is a template only: each Jest worker works in a copy of
// its own (worker-database.ts, test-env.ts), so files run in parallel without meeting.
import 'reflect-metadata';
import { Client } from 'pg';
import { migrateDatabase } from '../../migrations';
import { rmSync } from 'node:fs';
import { reportDir } from './openapi-validation';
import { runThroughPgBouncer, startRunPgBouncer } from './pgbouncer';
import { applyTestEnv } from './test-env';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by scripts/test.js
const { killLeftoverProcesses, dropLeftoverDatabases } = require('../../scripts/leftovers.js') as {
  killLeftoverProcesses(ownedBy?: number): number;
  dropLeftoverDatabases(ownedBy?: number): Promise<string[]>;
};

export async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** Drops the run's database and every database named after it (the workers' copies, private ones). */
export async function dropRunDatabases(run: string): Promise<void> {
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR starts_with(datname, $1 || '_')`,
      [run],
    );
    // The copies first: the template goes once nothing was made from it.
    for (const { datname } of rows.sort((a, b) => b.datname.length - a.datname.length))
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export default async function globalSetup(): Promise<void> {
  applyTestEnv();
  const killed = killLeftoverProcesses();
  const dropped = await dropLeftoverDatabases();
  if (killed || dropped.length)
    process.stderr.write(
      `removed what killed test runs left: ${killed} processes, databases ${dropped.join(', ') || 'none'}\n`,
    );
  const name = process.env.TEST_RUN_DATABASE!;
  rmSync(reportDir(), { recursive: true, force: true });
  await dropRunDatabases(name);
  await adminQuery(`CREATE DATABASE "${name}"`);
  await migrateDatabase(`postgres://postgres@127.0.0.1:5432/${name}`);
  if (runThroughPgBouncer()) {
    await startRunPgBouncer();
    applyTestEnv();
  }
}
