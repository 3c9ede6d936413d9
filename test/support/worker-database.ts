// Jest setupFilesAfterEnv: before a file's own hooks, its Jest worker's database exists — a copy of the
// run's migrated template (global-setup.ts), made by the worker's first file (`CREATE DATABASE … TEMPLATE`,
// a file copy: far quicker than migrating). Files of one worker run one after another, so only one of
// them can find it missing.
import { Client } from 'pg';

beforeAll(async () => {
  const name = process.env.TEST_DATABASE!;
  const template = process.env.TEST_RUN_DATABASE!;
  if (name === template) return;
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  } finally {
    await admin.end();
  }
});
