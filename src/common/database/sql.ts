import { DataSource, EntityManager } from 'typeorm';
import type { Pool } from 'pg';
import { PgTransaction } from './pg-transaction';
import { namedStatementsAllowed } from './pool-mode';

type Queryable = Pick<DataSource | EntityManager, 'query'> | PgTransaction;

/**
 * Outside a transaction, reads and single statements go straight to the driver's pool: TypeORM's
 * `query()` builds a QueryRunner and a logger call per statement, which measured as a large part
 * of a hot read's CPU time (bench/reads). Inside a transaction the manager's own connection is used.
 */
function poolOf(db: Queryable): Pool | null {
  const source = db instanceof DataSource ? db : db instanceof EntityManager && !db.queryRunner ? db.connection : null;
  return (source?.driver as { master?: Pool } | undefined)?.master ?? null;
}

/**
 * Runs SQL and returns its rows. TypeORM answers UPDATE and DELETE with `[rows, count]` and
 * everything else with `rows`; callers should not have to remember which.
 */
export async function rows<T>(
  db: Queryable,
  sql: string,
  params: unknown[] = [],
  options: { prepared?: string } = {},
): Promise<T[]> {
  const pool = poolOf(db);
  // A named statement is parsed and planned once per connection (hot reads only), unless the connection
  // is pooled per transaction (pool-mode.ts).
  if (pool) {
    const name = namedStatementsAllowed(pool) ? options.prepared : undefined;
    return (await pool.query({ name, text: sql, values: params })).rows as T[];
  }
  if (db instanceof PgTransaction) return db.query<T[]>(sql, params, options.prepared);
  const result: unknown = await db.query(sql, params);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}

export async function row<T>(
  db: Queryable,
  sql: string,
  params: unknown[] = [],
  options: { prepared?: string } = {},
): Promise<T | null> {
  return (await rows<T>(db, sql, params, options))[0] ?? null;
}
