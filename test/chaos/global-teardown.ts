// The chaos suite's teardown: before the run's databases are dropped, the operators' money audit
// (`npm run admin -- audit-money`, src/billing/money-audit.ts) runs against each database the suite's files
// worked in — every Jest worker's copy of the run's template (test/support/test-env.ts), over every account
// and job the storms, kills and outages left — through the built command line, as an operator runs it.
// A broken rule fails the run (Jest exits non-zero, which .ci/run counts as a failure); the databases are
// dropped either way.
import { spawnSync } from 'node:child_process';
import { Client } from 'pg';
import globalTeardown from '../support/global-teardown';
import { ensureBuilt, ROOT } from '../support/dist-build';

/** The databases the run's files worked in: `<run>_w<JEST_WORKER_ID>`, one per Jest worker (not the template). */
async function workerDatabases(run: string): Promise<string[]> {
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1 || '_w') ORDER BY datname`,
      [run],
    );
    return rows.map((row) => row.datname).filter((name) => /^_w\d+$/.test(name.slice(run.length)));
  } finally {
    await admin.end();
  }
}

/**
 * Audits each worker database of run `run` (the audit reads DATABASE_URL: the same server and port —
 * PgBouncer's in a TEST_THROUGH_PGBOUNCER run — with that database); throws when any breaks a rule.
 */
export async function auditRunMoney(run: string): Promise<void> {
  const cli = ensureBuilt('dist/src/admin-cli.js');
  const databases = await workerDatabases(run);
  if (!databases.length) throw new Error(`no database of a Jest worker of ${run} to audit`);
  const failed: string[] = [];
  for (const database of databases) {
    const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/');
    url.pathname = `/${database}`;
    const started = Date.now();
    const audit = spawnSync(process.execPath, [cli, 'audit-money'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url.toString(), TEST_DATABASE: database },
      encoding: 'utf8',
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (audit.status === 0) {
      process.stdout.write(`\nMoney audit of the chaos run's database ${database}: exact (${seconds} s)\n`);
      continue;
    }
    failed.push(database);
    process.stdout.write(
      `\nMoney audit of the chaos run's database ${database} failed (exit ${audit.status}, ${seconds} s):\n`,
    );
    process.stdout.write(`${audit.stdout}${audit.stderr}${audit.error ? `${audit.error.message}\n` : ''}`);
  }
  if (failed.length)
    throw new Error(`the money audit found problems in the chaos run (${failed.join(', ')}, printed above)`);
}

export default async function chaosGlobalTeardown(): Promise<void> {
  try {
    await auditRunMoney(process.env.TEST_RUN_DATABASE!);
  } finally {
    await globalTeardown();
  }
}
