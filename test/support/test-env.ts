// The environment every test process runs with: its own database and Redis prefix, so tests never
// touch a developer's run (and a developer's worker never takes a test job). Each `jest` run gets
// a database of its own (named in globalSetup, inherited by the workers), so two runs on one
// machine do not disturb each other.
export function applyTestEnv(): void {
  process.env.NODE_ENV = 'test';
  process.env.TEST_DATABASE ??= `mediajobs_test_${process.pid}`;
  process.env.DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${process.env.TEST_DATABASE}`;
  // TEST_THROUGH_PGBOUNCER=1: the run's PgBouncer, started by the global set-up (test/support/pgbouncer.ts).
  if (process.env.TEST_PGBOUNCER_PORT) {
    process.env.DATABASE_URL = `postgres://postgres@127.0.0.1:${process.env.TEST_PGBOUNCER_PORT}/${process.env.TEST_DATABASE}`;
    process.env.DATABASE_POOL_MODE = 'transaction';
  }
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
  process.env.REDIS_PREFIX ??= `mjtest${process.pid}`;
  process.env.ADMIN_TOKEN ??= 'test-admin-token-0123456789';
  process.env.LOG_LEVEL ??= 'silent';
  process.env.ALLOW_PRIVATE_URLS ??= '127.0.0.1,::1';
}
