// A database of a test file's own (fresh, migrated), for tests whose assertions count every row or event
// of the system — e.g. the Prometheus test, whose workers would otherwise also deliver other files'
// leftover webhooks. A copy of the run's migrated template (global-setup.ts) when there is one, else
// migrated here. Dropped by the returned function.
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { migrateDatabase, MIGRATIONS, MIGRATIONS_TRANSACTION_MODE } from '../../migrations';
import { adminQuery } from './global-setup';

async function exists(name: string | undefined): Promise<boolean> {
  if (!name) return false;
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    return !!(await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount;
  } finally {
    await admin.end();
  }
}

export async function privateDatabase(suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${process.env.TEST_DATABASE}_${suffix}`;
  const template = process.env.TEST_RUN_DATABASE;
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  if (template !== process.env.TEST_DATABASE && (await exists(template))) {
    await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  } else {
    await adminQuery(`CREATE DATABASE "${name}"`);
    await migrateDatabase(url);
  }
  return { url, drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/**
 * A private database as it was just before the migration `migrationName` (it and every later one undone),
 * for a migration's test: insert the rows of that era, then `source.runMigrations({ transaction: 'each' })`.
 * `close()` ends the connection and drops the database.
 */
export async function databaseBeforeMigration(
  suffix: string,
  migrationName: string,
): Promise<{ source: DataSource; close(): Promise<void> }> {
  const database = await privateDatabase(suffix);
  const source = new DataSource({
    type: 'postgres',
    url: database.url,
    migrations: MIGRATIONS,
    migrationsTransactionMode: MIGRATIONS_TRANSACTION_MODE,
  });
  await source.initialize();
  const close = async () => {
    await source.destroy();
    await database.drop();
  };
  const at = MIGRATIONS.findIndex((migration) => migration.name === migrationName);
  if (!(at > 0)) {
    await close();
    throw new Error(`${migrationName} is not a migration after the first (MIGRATIONS index ${at})`);
  }
  for (let n = MIGRATIONS.length - 1; n >= at; n--) await source.undoLastMigration();
  return { source, close };
}
