// A worker's storage calls ride out a short outage of the object store (a restart, a failover): an
// unavailable store is retried with growing pauses for about half a minute, then the item ends with
// upstream_error (retryable). Bounded, so a dead store never hangs a job.
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageUnavailableError } from '../common/storage/storage';

/** Pauses before each retry; about 30 s in all. */
export const STORE_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];

export async function retryWhileUnavailable<T>(
  action: () => Promise<T>,
  options: {
    signal?: AbortSignal;
    delaysMs?: readonly number[];
    onRetry?: (error: unknown, attempt: number) => void;
  } = {},
): Promise<T> {
  const delays = options.delaysMs ?? STORE_RETRY_DELAYS_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      if (!(error instanceof StorageUnavailableError) || attempt >= delays.length || options.signal?.aborted)
        throw error;
      options.onRetry?.(error, attempt + 1);
      await sleep(delays[attempt], undefined, { signal: options.signal }).catch(() => {
        throw error; // cancelled while waiting: the original failure stands
      });
    }
  }
}
