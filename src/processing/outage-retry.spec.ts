import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { StorageUnavailableError } from '../common/storage/storage';
import { DEPENDENCY_OUTAGE, retryThroughOutage, STORE_OUTAGE, type OutagePolicy } from './outage-retry';

/** STORE_OUTAGE's judgement with pauses of 1 ms, `count` of them. */
const quickStore = (count: number): OutagePolicy => ({
  isOutage: STORE_OUTAGE.isOutage,
  pauseMs: (attempt) => (attempt <= count ? 1 : null),
});

describe('retryThroughOutage', () => {
  test('an outage shorter than the pauses ends in success', async () => {
    let calls = 0;
    const retries: number[] = [];
    const result = await retryThroughOutage(
      async () => {
        calls += 1;
        if (calls < 3) throw new StorageUnavailableError('down');
        return 'stored';
      },
      quickStore(3),
      { onRetry: (_error, attempt) => retries.push(attempt) },
    );
    expect(result).toBe('stored');
    expect(retries).toEqual([1, 2]);
  });

  test('a store that stays down fails after the last pause, with the store error', async () => {
    let calls = 0;
    const failing = retryThroughOutage(async () => {
      calls += 1;
      throw new StorageUnavailableError('still down');
    }, quickStore(2));
    await expect(failing).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(calls).toBe(3);
  });

  test('errors the policy does not wait for are not retried', async () => {
    let calls = 0;
    await expect(
      retryThroughOutage(async () => {
        calls += 1;
        throw new Error('bug');
      }, STORE_OUTAGE),
    ).rejects.toThrow('bug');
    expect(calls).toBe(1);
    // A PostgreSQL outage is not the object store's.
    await expect(
      retryThroughOutage(async () => {
        calls += 1;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      }, STORE_OUTAGE),
    ).rejects.toThrow('ECONNREFUSED');
    expect(calls).toBe(2);
  });

  test('a cancel stops the pauses at once', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const failing = retryThroughOutage(
      async () => {
        throw new StorageUnavailableError('down');
      },
      { isOutage: STORE_OUTAGE.isOutage, pauseMs: () => 60_000 },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 10);
    await expect(failing).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('the object store: growing pauses, about 30 s in all, then it gives up', () => {
    const pauses = [1, 2, 3, 4, 5, 6].map((attempt) => STORE_OUTAGE.pauseMs(attempt, 0));
    expect(pauses).toEqual([1000, 2000, 4000, 8000, 15000, null]);
  });

  test('PostgreSQL or Redis: every 2 s for five minutes; only their unreachability is waited for', () => {
    expect(DEPENDENCY_OUTAGE.pauseMs(1, 0)).toBe(2000);
    expect(DEPENDENCY_OUTAGE.pauseMs(150, 5 * 60_000)).toBe(2000);
    expect(DEPENDENCY_OUTAGE.pauseMs(151, 5 * 60_000 + 1)).toBeNull();
    expect(DEPENDENCY_OUTAGE.isOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(DEPENDENCY_OUTAGE.isOutage(new Error('duplicate key value violates unique constraint'))).toBe(false);
  });

  test('every way TypeORM and pg report a lost connection is an outage', () => {
    const lost = [
      // The runner released on the driver's error event (a backend terminated between two statements).
      new QueryRunnerAlreadyReleasedError(),
      new QueryRunnerProviderAlreadyReleasedError(),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('Client was closed and is not queryable'),
      // SQLSTATEs: terminated by an operator, crash shutdown, starting up, idle-session and idle-transaction
      // timeouts, PgBouncer's "server conn crashed?" (08P01), a wrapped driver error.
      ...['57P01', '57P02', '57P03', '57P05', '25P03', '08P01', '08006'].map((code) =>
        Object.assign(new Error(code), { code }),
      ),
      Object.assign(new Error('query failed'), { driverError: Object.assign(new Error('x'), { code: '57P01' }) }),
      ...['ECONNRESET', 'ECONNREFUSED', 'EPIPE'].map((code) => Object.assign(new Error(code), { code })),
    ];
    for (const error of lost) expect([error.message, DEPENDENCY_OUTAGE.isOutage(error)]).toEqual([error.message, true]);
    // A database that was dropped is not coming back by waiting.
    expect(DEPENDENCY_OUTAGE.isOutage(Object.assign(new Error('gone'), { code: '57P04' }))).toBe(false);
  });
});
