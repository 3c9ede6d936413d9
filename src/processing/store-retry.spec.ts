import { StorageUnavailableError } from '../common/storage/storage';
import { retryWhileUnavailable } from './store-retry';

describe('retryWhileUnavailable', () => {
  test('an outage shorter than the pauses ends in success', async () => {
    let calls = 0;
    const retries: number[] = [];
    const result = await retryWhileUnavailable(
      async () => {
        calls += 1;
        if (calls < 3) throw new StorageUnavailableError('down');
        return 'stored';
      },
      { delaysMs: [1, 1, 1], onRetry: (_error, attempt) => retries.push(attempt) },
    );
    expect(result).toBe('stored');
    expect(retries).toEqual([1, 2]);
  });

  test('a store that stays down fails after the last pause, with the store error', async () => {
    let calls = 0;
    const failing = retryWhileUnavailable(
      async () => {
        calls += 1;
        throw new StorageUnavailableError('still down');
      },
      { delaysMs: [1, 1] },
    );
    await expect(failing).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(calls).toBe(3);
  });

  test('other errors are not retried', async () => {
    let calls = 0;
    await expect(
      retryWhileUnavailable(async () => {
        calls += 1;
        throw new Error('bug');
      }),
    ).rejects.toThrow('bug');
    expect(calls).toBe(1);
  });

  test('a cancel stops the pauses at once', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const failing = retryWhileUnavailable(
      async () => {
        throw new StorageUnavailableError('down');
      },
      { delaysMs: [60_000], signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 10);
    await expect(failing).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
