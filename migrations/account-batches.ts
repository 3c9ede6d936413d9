// How a migration fills numbers kept per account (account_usage_days, accounts.open_jobs) while the
// service may be serving: a few accounts at a time, each batch in short transactions that first lock
// the batch's account rows FOR NO KEY UPDATE (the lock a submit takes; a settlement's and a grant's
// balance UPDATE conflict with it too), then compute in statements of their own, whose snapshot
// therefore includes every write made under those locks before. The same functions serve the admin
// commands that count again after a rolling upgrade, and tests that write rows by hand.
// Not a migration: migrations/index.ts lists the migrations by name.
import type { DataSource } from 'typeorm';

/** Runs one statement on one connection, answering the rows of a SELECT (a QueryRunner's, a pg Client's). */
export type SqlOnOneConnection = (text: string, params?: unknown[]) => Promise<unknown>;

/**
 * Calls `work` with the ids of every account (or only of `accounts`), `size` at a time in id order.
 * Returns how many accounts it went through.
 */
export async function forEachAccountBatch(
  sql: SqlOnOneConnection,
  options: { size: number; accounts?: string[] },
  work: (ids: string[]) => Promise<void>,
): Promise<number> {
  let done = 0;
  for (let after = ''; ;) {
    const batch = (await sql(
      `SELECT id FROM accounts WHERE id > $1 AND ($3::text[] IS NULL OR id = ANY($3)) ORDER BY id LIMIT $2`,
      [after, options.size, options.accounts ?? null],
    )) as { id: string }[];
    const ids = batch.map((account) => account.id);
    if (!ids.length) return done;
    await work(ids);
    done += ids.length;
    if (ids.length < options.size) return done;
    after = ids[ids.length - 1];
  }
}

/** One transaction that locks the accounts' rows (in id order) and then runs `work`; rolled back if it throws. */
export async function underAccountLocks(
  sql: SqlOnOneConnection,
  ids: string[],
  work: () => Promise<void>,
): Promise<void> {
  await sql('BEGIN');
  try {
    await sql(`SELECT id FROM accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`, [ids]);
    await work();
    await sql('COMMIT');
  } catch (error) {
    await sql('ROLLBACK');
    throw error;
  }
}

/** `run` on one connection taken from `db` for the purpose (not inside a transaction), released after. */
export async function onOneConnection<T>(db: DataSource, run: (sql: SqlOnOneConnection) => Promise<T>): Promise<T> {
  const runner = db.createQueryRunner();
  try {
    return await run((text, params) => runner.query(text, params));
  } finally {
    await runner.release();
  }
}
