// The environment every test process runs with: its own database and Redis prefix, so tests never
// touch a developer's run (and a developer's worker never takes a test job).
//
// A `jest` run owns one migrated database, TEST_RUN_DATABASE (`mediajobs_test_<pid>`, named in globalSetup
// and inherited by the Jest workers), used only as a template: each Jest worker (JEST_WORKER_ID) works in a
// copy of its own, `<run database>_w<id>`, with a Redis prefix of its own, `<run prefix>w<id>`. Test files
// run in parallel across workers and one after another within a worker, so a file shares its database and
// prefix only with files that run before or after it, never beside it. Two runs on one machine never meet.
export function applyTestEnv(): void {
  process.env.NODE_ENV = 'test';
  // The process that owns the run (scripts/test.js, or Jest's own when run directly): what it leaves behind
  // carries its pid, so a later run can tell leftovers of a killed run (test/support/leftovers.ts).
  process.env.TEST_RUN_PID ??= String(process.pid);
  process.env.TEST_RUN_DATABASE ??= process.env.TEST_DATABASE ?? `mediajobs_test_${process.env.TEST_RUN_PID}`;
  process.env.TEST_RUN_REDIS_PREFIX ??= process.env.REDIS_PREFIX ?? `mjtest${process.env.TEST_RUN_PID}`;
  const worker = process.env.JEST_WORKER_ID;
  process.env.TEST_DATABASE = worker ? workerDatabase(worker) : process.env.TEST_RUN_DATABASE;
  process.env.REDIS_PREFIX = worker
    ? `${process.env.TEST_RUN_REDIS_PREFIX}w${worker}`
    : process.env.TEST_RUN_REDIS_PREFIX;
  process.env.DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${process.env.TEST_DATABASE}`;
  // TEST_THROUGH_PGBOUNCER=1: the run's PgBouncer, started by the global set-up (test/support/pgbouncer.ts).
  if (process.env.TEST_PGBOUNCER_PORT) {
    process.env.DATABASE_URL = `postgres://postgres@127.0.0.1:${process.env.TEST_PGBOUNCER_PORT}/${process.env.TEST_DATABASE}`;
    process.env.DATABASE_POOL_MODE = 'transaction';
  }
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
  process.env.ADMIN_TOKEN ??= 'test-admin-token-0123456789';
  process.env.LOG_LEVEL ??= 'silent';
  process.env.ALLOW_PRIVATE_URLS ??= '127.0.0.1,::1';
}

/** The database of Jest worker `worker` in this run: a copy of the run's migrated template. */
export function workerDatabase(worker: string | number): string {
  return `${process.env.TEST_RUN_DATABASE}_w${worker}`;
}
