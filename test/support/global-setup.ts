// Once per `jest` run: a fresh test database with every migration applied.
import 'reflect-metadata';
import { Client } from 'pg';
import { migrateDatabase } from '../../migrations';
import { rmSync } from 'node:fs';
import { reportDir } from './openapi-validation';
import { runThroughPgBouncer, startRunPgBouncer } from './pgbouncer';
import { applyTestEnv } from './test-env';

export async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

export default async function globalSetup(): Promise<void> {
  applyTestEnv();
  const name = process.env.TEST_DATABASE!;
  rmSync(reportDir(), { recursive: true, force: true });
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${name}"`);
  await migrateDatabase(process.env.DATABASE_URL!);
  if (runThroughPgBouncer()) {
    await startRunPgBouncer();
    applyTestEnv();
  }
}
