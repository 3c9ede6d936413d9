// The submit's transaction runs on the pg pool's client directly (src/common/database/pg-transaction.ts),
// not through TypeORM: it must still commit or roll back as a whole, run after-commit work (the
// credit counters) only once committed, hand the driver's own errors up (classify.ts reads their
// SQLSTATE), and never return a broken connection to the pool. Against the test database, on a pool
// of one connection, so each transaction after the first reuses — or must replace — the same one.
import { DataSource } from 'typeorm';
import { afterCommit } from '../../src/common/database/after-commit';
import { pgTransaction } from '../../src/common/database/pg-transaction';
import { row } from '../../src/common/database/sql';

describe('the submit transaction on the driver (pg-transaction.ts)', () => {
  let db: DataSource;
  const table = `pg_tx_probe_${process.pid}`;

  beforeAll(async () => {
    db = new DataSource({ type: 'postgres', url: process.env.DATABASE_URL, extra: { max: 1 } });
    await db.initialize();
    await db.query(`CREATE TABLE ${table} (id text PRIMARY KEY)`);
  });

  afterAll(async () => {
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.destroy();
  });

  const ids = async (): Promise<string[]> =>
    (await db.query<{ id: string }[]>(`SELECT id FROM ${table} ORDER BY id`)).map((found) => found.id);

  it('commits its statements together and runs after-commit work only then', async () => {
    const done: string[] = [];
    const answer = await pgTransaction(db, async (tx) => {
      await tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, ['a']);
      afterCommit(tx, () => done.push('counted'));
      const inserted = await row<{ id: string }>(tx, `INSERT INTO ${table} (id) VALUES ($1) RETURNING id`, ['b']);
      expect(done).toEqual([]);
      return inserted?.id;
    });
    expect(answer).toBe('b');
    expect(done).toEqual(['counted']);
    expect(await ids()).toEqual(['a', 'b']);
  });

  it('rolls back on an error, drops the after-commit work and rethrows the error as it was', async () => {
    const done: string[] = [];
    const refusal = new Error('refused at step 8');
    await expect(
      pgTransaction(db, async (tx) => {
        await tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, ['c']);
        afterCommit(tx, () => done.push('counted'));
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(done).toEqual([]);
    expect(await ids()).toEqual(['a', 'b']);
  });

  it("hands up the driver's error with its SQLSTATE, and the connection is clean for the next transaction", async () => {
    await expect(
      pgTransaction(db, (tx) => tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, ['a'])),
    ).rejects.toMatchObject({ code: '23505' });
    // Not left inside the aborted transaction: the next one on the same connection works.
    await pgTransaction(db, (tx) => tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, ['d']));
    expect(await ids()).toEqual(['a', 'b', 'd']);
  });

  it('does not return a connection that died mid-transaction to the pool', async () => {
    const other = new DataSource({ type: 'postgres', url: process.env.DATABASE_URL });
    await other.initialize();
    try {
      await expect(
        pgTransaction(db, async (tx) => {
          const [{ pid }] = await tx.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
          await other.query('SELECT pg_terminate_backend($1)', [pid]);
          await tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, ['e']);
        }),
      ).rejects.toThrow();
    } finally {
      await other.destroy();
    }
    await pgTransaction(db, (tx) => tx.query(`INSERT INTO ${table} (id) VALUES ($1)`, ['f']));
    expect(await ids()).toEqual(['a', 'b', 'd', 'f']);
  });
});
