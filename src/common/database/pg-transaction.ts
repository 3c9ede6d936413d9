import type { Pool, PoolClient } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { namedStatementsAllowed } from './pool-mode';

/**
 * A transaction on one of the pool's clients, without TypeORM: the submit's transaction (bench/submits)
 * spent about a sixth of its CPU in TypeORM's QueryRunner (built per transaction, a broadcaster, a
 * logger call and a result wrapper per statement) around the same few plain SQL statements.
 * `query` answers rows, as `row`/`rows` (sql.ts) expect; errors are the driver's own (classify.ts
 * reads both). After-commit work (after-commit.ts) runs once COMMIT has succeeded.
 */
export class PgTransaction {
  private readonly committed: (() => void)[] = [];

  constructor(
    private readonly client: PoolClient,
    /** Whether named statements are safe on this connection (pool-mode.ts). */
    private readonly named = false,
  ) {}

  /**
   * `prepared`: a name for the statement (one name per text), parsed once per connection and then only
   * bound and run — the submit's statements are the hot ones (sql.ts `rows` passes it). Unnamed behind
   * a transaction pooler.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- EntityManager.query's own shape, so either can be passed
  async query<T = any>(text: string, values?: unknown[], prepared?: string): Promise<T> {
    const name = this.named ? prepared : undefined;
    return (await this.client.query({ name, text, values })).rows as T;
  }

  /** Runs `work` after this transaction commits; dropped if it rolls back. */
  afterCommit(work: () => void): void {
    this.committed.push(work);
  }

  /** Called by pgTransaction after COMMIT. */
  runCommitted(): void {
    for (const work of this.committed.splice(0)) work();
  }
}

/** What a statement inside a transaction runs on: a TypeORM manager or a PgTransaction. */
export type Transaction = EntityManager | PgTransaction;

/**
 * Runs `work` in a transaction on one pooled connection (READ COMMITTED, as TypeORM's would). On an
 * error it rolls back and rethrows; a connection whose ROLLBACK fails too is closed rather than
 * returned to the pool, so a broken or mid-transaction connection is never handed out again.
 */
export async function pgTransaction<T>(db: DataSource, work: (tx: PgTransaction) => Promise<T>): Promise<T> {
  const pool = (db.driver as unknown as { master: Pool }).master;
  const client = await pool.connect();
  let broken: Error | undefined;
  // The pool listens for a connection's errors only while it is idle: one that dies while checked out
  // would otherwise emit an unhandled 'error' and end the process (TypeORM listens the same way). The
  // statement in flight fails with the error as well, so it is only kept here, to close the connection.
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    const tx = new PgTransaction(client, namedStatementsAllowed(pool));
    let result: T;
    try {
      await client.query('START TRANSACTION');
      result = await work(tx);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    }
    tx.runCommitted();
    return result;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
