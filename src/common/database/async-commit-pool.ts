import { Pool } from 'pg';
import type { AppConfig } from '../config/config';
import { asyncCommitOptions, poolModeOptions } from './pool-mode';

/**
 * A small pool whose commits do not wait for the WAL flush (`synchronous_commit = off`; about 3 ms
 * per commit on this machine's disk, see bench/). Only for writes that a Postgres crash may undo
 * without harm — a job's "processing" mark, progress, idempotency records — never for money: WAL
 * is flushed in order, so the next synchronous commit (a hold, a settlement) makes them durable too,
 * and a crash can lose at most the last ~200 ms of them. Behind a transaction pooler (DATABASE_POOL_MODE)
 * the setting cannot be tied to these connections: single statements then commit synchronously, and
 * transactions begun with ASYNC_BEGIN still skip the flush (pool-mode.ts).
 */
export function createAsyncCommitPool(config: AppConfig, max = 10): Pool {
  const pool = new Pool({
    connectionString: config.databaseUrl,
    max,
    connectionTimeoutMillis: 2000,
    query_timeout: 10_000,
    idleTimeoutMillis: 30_000,
    ...asyncCommitOptions(config.databasePoolMode),
    ...poolModeOptions(config.databasePoolMode),
  });
  // An idle connection dropped by a Postgres restart: the pool replaces it on next use.
  pool.on('error', () => undefined);
  return pool;
}
