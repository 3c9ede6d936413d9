import { adminQuery } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  if (process.env.TEST_DATABASE)
    await adminQuery(`DROP DATABASE IF EXISTS "${process.env.TEST_DATABASE}" WITH (FORCE)`);
}
