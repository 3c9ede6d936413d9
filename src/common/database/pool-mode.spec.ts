import { Pool } from 'pg';
import { ConfigError, parseConfig } from '../config/config';
import { asyncCommitOptions, namedStatementsAllowed, poolModeOptions } from './pool-mode';

describe('DATABASE_POOL_MODE: what a connection may keep between transactions', () => {
  test('unset is session: PostgreSQL itself (or a pooler in session mode)', () => {
    expect(parseConfig({}).databasePoolMode).toBe('session');
    expect(parseConfig({ DATABASE_POOL_MODE: 'transaction' }).databasePoolMode).toBe('transaction');
  });

  test('anything else stops start-up naming the variable', () => {
    expect(() => parseConfig({ DATABASE_POOL_MODE: 'statement' })).toThrow(
      new ConfigError('DATABASE_POOL_MODE must be session or transaction; got "statement".'),
    );
  });

  test('session: named statements and the async-commit startup option', async () => {
    const pool = new Pool({ max: 1, ...poolModeOptions('session') });
    expect(namedStatementsAllowed(pool)).toBe(true);
    expect(asyncCommitOptions('session')).toEqual({ options: '-c synchronous_commit=off' });
    await pool.end();
  });

  test('transaction: neither (PgBouncer refuses the option; a statement may meet another server connection)', async () => {
    const pool = new Pool({ max: 1, ...poolModeOptions('transaction') });
    expect(namedStatementsAllowed(pool)).toBe(false);
    expect(asyncCommitOptions('transaction')).toEqual({});
    await pool.end();
  });
});
