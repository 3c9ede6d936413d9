// The worker's one retry loop for outages of what it depends on. Two policies: the object store
// (a restart, a failover) is retried with growing pauses for about half a minute, then the item ends
// with upstream_error (retryable), so a dead store never hangs a job; PostgreSQL or Redis while a
// finished item ends is waited out every few seconds for up to five minutes, so an outage never
// throws finished work away (the item would run again). Anything else is thrown at once.
import { setTimeout as sleep } from 'node:timers/promises';
import { isUnavailableError } from '../common/errors/classify';
import { StorageUnavailableError } from '../common/storage/storage';

export interface OutagePolicy {
  /** Whether `error` means the dependency is unreachable (worth waiting for). */
  isOutage(error: unknown): boolean;
  /** The pause before retry number `attempt` (1, 2, …), `elapsedMs` after the first try; null: give up. */
  pauseMs(attempt: number, elapsedMs: number): number | null;
}

/** Pauses before each retry of a storage call; about 30 s in all. */
export const STORE_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];

export const STORE_OUTAGE: OutagePolicy = {
  isOutage: (error) => error instanceof StorageUnavailableError,
  pauseMs: (attempt) => STORE_RETRY_DELAYS_MS[attempt - 1] ?? null,
};

/** How long a finished item's ending waits for PostgreSQL or Redis to come back, and how often it tries. */
export const ENDING_RETRY_MS = 5 * 60_000;
const ENDING_RETRY_EVERY_MS = 2000;

export const DEPENDENCY_OUTAGE: OutagePolicy = {
  isOutage: isUnavailableError,
  pauseMs: (_attempt, elapsedMs) => (elapsedMs > ENDING_RETRY_MS ? null : ENDING_RETRY_EVERY_MS),
};

/** The policies a worker's use cases wait by (a spec gives quicker ones). */
export interface OutagePolicies {
  /** The object store. */
  store: OutagePolicy;
  /** PostgreSQL or Redis while finished work ends. */
  dependency: OutagePolicy;
}

export const OUTAGE_POLICIES = Symbol('OUTAGE_POLICIES');
export const WORKER_OUTAGE_POLICIES: OutagePolicies = { store: STORE_OUTAGE, dependency: DEPENDENCY_OUTAGE };

/**
 * Runs `action`, again after each outage the policy waits for. The last failure is thrown as it was;
 * a cancel (`signal`) stops the waiting at once, with the failure that started it.
 */
export async function retryThroughOutage<T>(
  action: () => Promise<T>,
  policy: OutagePolicy,
  options: { signal?: AbortSignal; onRetry?: (error: unknown, attempt: number) => void } = {},
): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      const pause =
        policy.isOutage(error) && !options.signal?.aborted ? policy.pauseMs(attempt, Date.now() - started) : null;
      if (pause === null) throw error;
      options.onRetry?.(error, attempt);
      await sleep(pause, undefined, { signal: options.signal }).catch(() => {
        throw error; // cancelled while waiting: the original failure stands
      });
    }
  }
}
