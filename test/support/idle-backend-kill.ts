// Terminates a PostgreSQL backend in the middle of a transaction of this process, at the one moment the
// driver cannot see coming: between two statements ("idle in transaction"). The backend is first made to
// wait behind a row lock held here; the lock is let go by the server itself (a sleep, then COMMIT, sent as
// one query), and for that while this process's event loop is held by a synchronous psql call, which
// terminates the backend once its statement has returned. When the loop runs again, the client finds the
// statement's answer and then the end of its connection, before it could send its next statement — what a
// backend terminated by an operator, a failover or PgBouncer looks like to a transaction.
import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { pollUntil } from './processes';

const DIRECT = { host: '127.0.0.1', port: 5432, user: 'postgres' };

export class IdleBackendKiller {
  private constructor(
    private readonly database: string,
    private readonly holder: Client,
  ) {}

  /** A killer for `database`, its lock holder connected directly (never through a PgBouncer under test). */
  static async connect(database: string): Promise<IdleBackendKiller> {
    const holder = new Client({ ...DIRECT, database, application_name: 'idle-backend-kill' });
    await holder.connect();
    return new IdleBackendKiller(database, holder);
  }

  /** Takes the row lock the victim's statement is to wait behind (`lockSql` selects it FOR UPDATE). */
  async hold(lockSql: string, params: unknown[]): Promise<void> {
    await this.holder.query('BEGIN');
    const { rowCount } = await this.holder.query(lockSql, params);
    if (rowCount !== 1) throw new Error(`the lock statement locked ${rowCount} rows, not 1`);
  }

  /**
   * Waits for a backend to wait behind the held lock, lets the lock go, and terminates that backend once
   * its statement has returned. Returns the state it was terminated in ('idle in transaction', as meant).
   */
  async killWaiter(timeoutMs = 180_000): Promise<string> {
    const holderPid = (this.holder as unknown as { processID: number }).processID;
    const victim = await pollUntil(
      'a statement to wait behind the held lock',
      async () => {
        // Inside the holder's transaction pg_stat_activity is the snapshot first read there: a backend that
        // connected after it (a worker's pool opening one more connection) would never show without a new one.
        await this.holder.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await this.holder.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`,
          [holderPid],
        );
        return rows[0]?.pid;
      },
      timeoutMs,
      100,
    );
    // Simple protocol, one message: the server sleeps, then commits, with no help from this process.
    const released = this.holder.query('SELECT pg_sleep(0.3); COMMIT');
    const state = execFileSync(
      'psql',
      [
        '-h',
        DIRECT.host,
        '-p',
        String(DIRECT.port),
        '-U',
        DIRECT.user,
        '-d',
        this.database,
        '-Atq',
        '-c',
        'SELECT pg_sleep(1)',
        '-c',
        `SELECT state FROM pg_stat_activity WHERE pid = ${victim}`,
        '-c',
        `SELECT pg_terminate_backend(${victim})`,
      ],
      { encoding: 'utf8' },
    ).split('\n')[1]; // after pg_sleep's empty line
    await released;
    return state ?? '';
  }

  async close(): Promise<void> {
    await this.holder.end();
  }
}
