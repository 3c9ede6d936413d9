// The chaos suite's teardown: before the run's database is dropped, the operators' money audit
// (`npm run admin -- audit-money`, src/billing/money-audit.ts) runs against it, over every account and job
// the suite's storms, kills and outages left — through the built command line, as an operator runs it.
// A broken rule fails the run (Jest exits non-zero, which .ci/run counts as a failure); the database is
// dropped either way.
import { spawnSync } from 'node:child_process';
import globalTeardown from '../support/global-teardown';
import { ensureBuilt, ROOT } from '../support/dist-build';

function auditMoney(): void {
  const cli = ensureBuilt('dist/src/admin-cli.js');
  const started = Date.now();
  const audit = spawnSync(process.execPath, [cli, 'audit-money'], {
    cwd: ROOT,
    env: process.env,
    encoding: 'utf8',
    timeout: 300_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (audit.status === 0) {
    process.stdout.write(`\nMoney audit of the chaos run's database: exact (${seconds} s)\n`);
    return;
  }
  process.stdout.write(`\nMoney audit of the chaos run's database failed (exit ${audit.status}, ${seconds} s):\n`);
  process.stdout.write(`${audit.stdout}${audit.stderr}${audit.error ? `${audit.error.message}\n` : ''}`);
  throw new Error('the money audit found problems in the chaos run (printed above)');
}

export default async function chaosGlobalTeardown(): Promise<void> {
  try {
    auditMoney();
  } finally {
    await globalTeardown();
  }
}
