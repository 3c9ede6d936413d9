// Once per `npm test`: a fresh test database with every migration applied.
import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { TEST_DATABASE, applyTestEnv } from './test-env';

export default async function globalSetup(): Promise<void> {
  applyTestEnv();
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${TEST_DATABASE}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${TEST_DATABASE}"`);
  await admin.end();
  const dataSource = new DataSource({ type: 'postgres', url: process.env.DATABASE_URL, migrations: MIGRATIONS });
  await dataSource.initialize();
  await dataSource.runMigrations();
  await dataSource.destroy();
}
