// What every benchmark runs against: its own database (migrated), its own Redis prefix and its own
// storage directory, all removed afterwards, so a benchmark never touches a developer's data.
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { migrateDatabase } from '../../migrations';

/** The repository root (bench code runs compiled, from dist/bench/…). */
export const ROOT = resolve(__dirname, '../../..');

/** The machine's servers (or BENCH_POSTGRES_URL, BENCH_REDIS_URL): where benchmarks run unless told otherwise. */
export const POSTGRES = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
const DEFAULT_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A plan whose limits no benchmark reaches: we measure the work, not the throttling. */
export const BENCH_PLAN = 'bench';

export interface BenchEnvironment {
  name: string;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  storageDir: string;
  adminToken: string;
  /** The environment an API or worker process of ours starts with. */
  serviceEnv: Record<string, string>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** One statement in the `postgres` database of a server (default: POSTGRES). */
export async function adminQuery(sql: string, postgres: string = POSTGRES): Promise<void> {
  const client = new Client({ connectionString: `${postgres}/postgres` });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * `template`: a database to start from (a seeded one, e.g. bench/purge.ts's million expired jobs),
 * copied file by file by PostgreSQL — the migrations added since it was seeded are applied on the copy.
 * `postgresUrl`, `redisUrl`: other servers than the machine's own — bench/capacity.ts runs its own
 * PostgreSQL cluster and redis-server, whose whole statistics are then the run's alone.
 */
export async function createEnvironment(
  label: string,
  options: { template?: string; postgresUrl?: string; redisUrl?: string } = {},
): Promise<BenchEnvironment> {
  const postgres = options.postgresUrl ?? POSTGRES;
  const REDIS_URL = options.redisUrl ?? DEFAULT_REDIS_URL;
  const name = `mediajobs_bench_${label}_${process.pid}`;
  const databaseUrl = `${postgres}/${name}`;
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`, postgres);
  await adminQuery(`CREATE DATABASE "${name}"${options.template ? ` TEMPLATE "${options.template}"` : ''}`, postgres);
  await migrateDatabase(databaseUrl);

  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query(
    `INSERT INTO plans (id, requests_per_second, concurrent_jobs, processing_minutes_per_month, apis, max_output_height,
                        usd_per_credit, webhook_endpoints, upload_storage_bytes)
     VALUES ($1, 1000000, 1000000, NULL, '{sdr2hdr,audio}', 2160, 0.005, 1000000, 1099511627776)
     ON CONFLICT (id) DO NOTHING`,
    [BENCH_PLAN],
  );
  return environmentOn({
    name,
    databaseUrl,
    client: db,
    label,
    redisUrl: REDIS_URL,
    dropDatabase: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`, postgres),
  });
}

/**
 * What a benchmark's services run with, on a database that exists (`client` connected to it): their own
 * Redis prefix and storage folder, removed on close; the database dropped on close when `dropDatabase`
 * is given (bench/growth.ts keeps its seeded ones). `serviceEnv` adds to or overrides the defaults.
 */
export async function environmentOn(database: {
  name: string;
  databaseUrl: string;
  client: Client;
  label: string;
  redisUrl?: string;
  serviceEnv?: Record<string, string>;
  dropDatabase?: () => Promise<void>;
}): Promise<BenchEnvironment> {
  const { name, databaseUrl, client, label } = database;
  const redisUrl = database.redisUrl ?? DEFAULT_REDIS_URL;
  const storageDir = await mkdtemp(join(tmpdir(), `mediajobs-bench-${label}-`));
  const redisPrefix = `mjbench${label}${process.pid}`;
  const adminToken = 'bench-admin-token-0123456789';
  return {
    name,
    databaseUrl,
    redisUrl,
    redisPrefix,
    storageDir,
    adminToken,
    serviceEnv: {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      ADMIN_TOKEN: adminToken,
      ASSET_URL_SECRET: 'bench-asset-url-secret-0123456789',
      STORAGE_DIR: storageDir,
      MAX_QUEUE_DEPTH: '100000000',
      LOG_LEVEL: 'info',
      LICENSE_SIGNING_KEY: generateKeyPairSync('ed25519')
        .privateKey.export({ type: 'pkcs8', format: 'der' })
        .toString('base64'),
      ...database.serviceEnv,
    },
    query: async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
    close: async () => {
      await client.end();
      await database.dropDatabase?.();
      await deleteKeys(redisUrl, `${redisPrefix}:*`);
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}

async function deleteKeys(url: string, pattern: string): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
