// A database of a test file's own (fresh, migrated), for tests whose assertions count every row or event
// of the system — e.g. the Prometheus test, whose workers would otherwise also deliver other files'
// leftover webhooks. Dropped by the returned function.
import { migrateDatabase } from '../../migrations';
import { adminQuery } from './global-setup';

export async function privateDatabase(suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${process.env.TEST_DATABASE}_${suffix}`;
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${name}"`);
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  await migrateDatabase(url);
  return { url, drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
