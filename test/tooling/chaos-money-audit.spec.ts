// The chaos suite's closing money audit (test/chaos/global-teardown.ts) reads the databases the suite's files
// wrote: each Jest worker's copy of the run's template, not the template itself, which no test writes.
import { Client } from 'pg';
import { auditRunMoney } from '../chaos/global-teardown';
import { adminQuery } from '../support/global-setup';
import { privateDatabase } from '../support/private-database';

describe("the chaos run's money audit", () => {
  // A run of its own: a migrated template and two workers' copies, named as test/support/test-env.ts names them.
  let run: string;
  let drops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const template = await privateDatabase('chaosrun');
    run = new URL(template.url).pathname.slice(1);
    drops = [template.drop];
    for (const worker of [1, 2]) {
      await adminQuery(`CREATE DATABASE "${run}_w${worker}" TEMPLATE "${run}"`);
      drops.unshift(() => adminQuery(`DROP DATABASE IF EXISTS "${run}_w${worker}" WITH (FORCE)`));
    }
  }, 120_000);

  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it("passes when every worker's money is exact, and fails naming the worker database whose balance moved without a ledger row", async () => {
    await expect(auditRunMoney(run)).resolves.toBeUndefined();

    const second = new Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${run}_w2` });
    await second.connect();
    try {
      await second.query(
        `INSERT INTO accounts (id, name, plan_id, balance_credits) VALUES ('acct_chaosaudit', 'audit', (SELECT id FROM plans LIMIT 1), 7)`,
      );
    } finally {
      await second.end();
    }
    await expect(auditRunMoney(run)).rejects.toThrow(`the money audit found problems in the chaos run (${run}_w2,`);
  }, 120_000);
});
