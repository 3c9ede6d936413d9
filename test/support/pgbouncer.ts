// A private PgBouncer (Debian's /usr/sbin/pgbouncer) in transaction-pooling mode on a free loopback port,
// in front of the machine's PostgreSQL (127.0.0.1:5432, trust auth): every database of that server is
// reachable through it under the same name. Its pool is small, so clients really share server
// connections. Its admin console (database `pgbouncer`) takes PAUSE, RESUME, RECONNECT and KILL.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface PgBouncerOptions {
  /** Server connections per database and user (default_pool_size). */
  poolSize?: number;
}

export class PrivatePgBouncer {
  private child?: ChildProcess;
  private exited?: Promise<void>;

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  /** Writes its configuration into a folder of its own and starts it; resolves once its console answers. */
  static async start(options: PgBouncerOptions = {}): Promise<PrivatePgBouncer> {
    const dir = mkdtempSync(join(tmpdir(), 'mj-pgbouncer-'));
    const bouncer = new PrivatePgBouncer(await freePort(), dir);
    const userlist = join(dir, 'userlist.txt');
    // Trust: PgBouncer checks only that the user is listed (the server behind it trusts loopback too).
    writeFileSync(userlist, '"postgres" ""\n');
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        '* = host=127.0.0.1 port=5432',
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${bouncer.port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${userlist}`,
        'admin_users = postgres',
        'pool_mode = transaction',
        `default_pool_size = ${options.poolSize ?? 5}`,
        'max_client_conn = 2000',
        // After a failed server login (PostgreSQL away), try again within a second, not 15.
        'server_login_retry = 1',
        `logfile = ${join(dir, 'pgbouncer.log')}`,
        '',
      ].join('\n'),
    );
    // PgBouncer refuses to run as root (CI runs as root): it then runs as PostgreSQL's own user.
    if (userInfo().uid === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
      for (const path of [dir, userlist, join(dir, 'pgbouncer.ini')]) chownSync(path, uid, -1);
    }
    await bouncer.start();
    return bouncer;
  }

  /** The URL of `database` through PgBouncer. */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts (again) on the same port with the same configuration. */
  async start(): Promise<void> {
    if (this.child) return;
    for (let attempt = 0; ; attempt++) {
      const args = [...(userInfo().uid === 0 ? ['-u', 'postgres'] : []), join(this.dir, 'pgbouncer.ini')];
      const child = spawn(PGBOUNCER, args, { stdio: 'ignore' });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      let gone = false;
      void exited.then(() => (gone = true));
      // Up once its console answers, or gone (it exits at once when it cannot listen or read its files).
      let up: 'up' | 'exited' | undefined;
      for (const deadline = Date.now() + 10_000; !up && Date.now() < deadline; await sleep(50))
        up = gone ? 'exited' : (await this.answers()) ? 'up' : undefined;
      if (up === 'up') {
        this.child = child;
        this.exited = exited;
        return;
      }
      if (!up) {
        child.kill('SIGKILL');
        throw new Error(`pgbouncer on port ${this.port} did not answer within 10 s (see ${this.dir}/pgbouncer.log)`);
      }
      // Exited at once: the port was still held a moment after a kill. Try again, a few times.
      if (attempt >= 20)
        throw new Error(`pgbouncer would not start on port ${this.port} (see ${this.dir}/pgbouncer.log)`);
      await sleep(100);
    }
  }

  /** SIGKILL: every client and server connection through it drops at once. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.kill('SIGKILL');
    await this.exited;
  }

  /** Lets this process exit without waiting for PgBouncer (ended later by its pid). */
  detach(): void {
    this.child?.unref();
  }

  /** For afterAll: killed, its folder removed. */
  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** One command on the admin console (`SHOW POOLS`, `PAUSE db`, `KILL db`, …); its rows. */
  async admin(command: string): Promise<Record<string, unknown>[]> {
    const client = new Client({ connectionString: this.url('pgbouncer'), connectionTimeoutMillis: 2000 });
    await client.connect();
    try {
      return (await client.query(command)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  }

  /** Server connections it holds to `database` now, open or idle (SHOW SERVERS). */
  async serverConnections(database: string): Promise<number> {
    return (await this.admin('SHOW SERVERS')).filter((row) => row.database === database).length;
  }

  private async answers(): Promise<boolean> {
    try {
      await this.admin('SHOW VERSION');
      return true;
    } catch {
      return false;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// A whole Jest run through PgBouncer: TEST_THROUGH_PGBOUNCER=1 (e.g. `TEST_THROUGH_PGBOUNCER=1 npx jest
// -c jest.chaos.config.js test/chaos/submit-storm.e2e-spec.ts`). The global set-up starts one after the
// migrations (which run direct) and names it in the environment the test processes inherit; the test
// env (test-env.ts) then points DATABASE_URL through it with DATABASE_POOL_MODE=transaction, for the
// API and worker instances in the test process and the worker processes it spawns alike.
// ---------------------------------------------------------------------------------------------------

export function runThroughPgBouncer(): boolean {
  return process.env.TEST_THROUGH_PGBOUNCER === '1';
}

/** For the global set-up: starts the run's PgBouncer and records it in the environment. */
export async function startRunPgBouncer(): Promise<void> {
  const bouncer = await PrivatePgBouncer.start({ poolSize: Number(process.env.TEST_PGBOUNCER_POOL_SIZE) || 20 });
  // It lives until the global teardown, which ends it by its pid.
  bouncer.detach();
  process.env.TEST_PGBOUNCER_PORT = String(bouncer.port);
  process.env.TEST_PGBOUNCER_PID = String(bouncer.pid);
  process.env.TEST_PGBOUNCER_DIR = bouncer.dir;
}

/** For the global teardown: ends the run's PgBouncer, if one was started. */
export function stopRunPgBouncer(): void {
  const pid = Number(process.env.TEST_PGBOUNCER_PID);
  if (pid) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (process.env.TEST_PGBOUNCER_DIR) rmSync(process.env.TEST_PGBOUNCER_DIR, { recursive: true, force: true });
}
