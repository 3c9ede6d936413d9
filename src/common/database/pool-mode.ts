// What a connection may carry from one transaction to the next, by DATABASE_POOL_MODE. Behind PgBouncer's
// pool_mode=transaction a client connection is lent a server connection for one transaction at a time
// (PgBouncer 1.18, Debian 12's, keeps no prepared statements for its clients; ≥1.21 can with
// max_prepared_statements), so:
// - a named prepared statement, parsed once per client connection by node-postgres, would later be run
//   on a server connection that never saw it ("prepared statement … does not exist") or parsed twice
//   on one ("… already exists"): statements stay unnamed;
// - a session setting (a startup `options` or a `SET` outside a transaction) would either be refused
//   (PgBouncer refuses the `options` startup parameter) or stay on the server connection and apply to
//   whichever client gets it next — a `synchronous_commit = off` reaching a money transaction. Settings
//   are made per transaction (`SET LOCAL`) or not at all.
// Advisory locks are transaction-scoped (pg_advisory_xact_lock), and nothing LISTENs (cancels are a Redis
// channel), so neither needs a session.
import type { Pool, PoolConfig } from 'pg';
import type { DatabasePoolMode } from '../config/config';

/** Marks a pg Pool (TypeORM's `extra`, or our own) whose connections are pooled per transaction. */
interface PoolModeOptions {
  transactionPooled?: boolean;
}

/** The pg Pool options of a mode (merged into TypeORM's `extra` and our own pools' options). */
export function poolModeOptions(mode: DatabasePoolMode): PoolModeOptions {
  return mode === 'transaction' ? { transactionPooled: true } : {};
}

/** Whether a named (once-per-connection) prepared statement is safe on this pool's connections. */
export function namedStatementsAllowed(pool: Pool): boolean {
  return !(pool.options as PoolConfig & PoolModeOptions).transactionPooled;
}

/**
 * Startup options that make every commit of the pool's connections skip the WAL flush. None behind a
 * transaction pooler: there the setting cannot be tied to our connections, and such a pool commits
 * synchronously (slower, never less safe); a pool's own transactions still say `SET LOCAL` (ASYNC_BEGIN).
 */
export function asyncCommitOptions(mode: DatabasePoolMode): Pick<PoolConfig, 'options'> {
  return mode === 'transaction' ? {} : { options: '-c synchronous_commit=off' };
}

/** BEGIN for a transaction whose commit need not wait for the WAL flush, in either mode (one round trip). */
export const ASYNC_BEGIN = 'BEGIN; SET LOCAL synchronous_commit = off';
