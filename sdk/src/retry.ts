// The client's retry policy as one pure function: the specification's table 7.11 (docs/api-decisions.md §9).
// "Retries" counts requests after the first one, as 7.11's "attempts" does.

/** Caps per row of table 7.11. */
export const RETRY_CAPS = {
  /** retryable true with 429, 503 or 504. */
  throttledOrUnavailable: 3,
  /** retryable true with 500 or 502. */
  serverError: 2,
  /** retryable true with 409 (resource_locked: the first request with this key is still running). */
  conflict: 2,
  /** No response at all (connection dropped, timeout): resent with the same Idempotency-Key. */
  noResponse: 2,
  /**
   * retryable true with 403 offline_grace_expired: one retry, after validating online (the same
   * request with the same token would fail again). license.retrieve does it when given `revalidate`.
   */
  offlineGraceExpired: 1,
} as const;

/** The retryable licence code whose retry needs a fresh token first (validate online). */
export const OFFLINE_GRACE_EXPIRED = 'offline_grace_expired';

/** A Retry-After longer than this is raised at once rather than slept through. */
export const MAX_RETRY_AFTER_SECONDS = 60;

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 8000;

export interface RetryContext {
  /** Retries already made for this request: 0 when the first request has just failed. */
  retriesSoFar: number;
  /** HTTP status of the failed attempt; null when no response arrived. */
  status: number | null;
  /** The error's `retryable` flag (true for a request that got no response). */
  retryable: boolean;
  /** Retry-After in seconds, when the response carried one. */
  retryAfterSeconds: number | null;
  /** The caller's own cap; it can lower the table's caps, never raise them. */
  maxRetries?: number;
  /** A number in [0, 1) for the jitter; injected so that tests are exact. */
  random: number;
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: RetryStopReason };

/**
 * Why a failed call was raised rather than retried: `not_retryable` (the error says retryable false),
 * `status_not_retried` (retryable, but table 7.11 has no retry for its status), `retries_exhausted`
 * (the table's cap, or the caller's `maxRetries`, is used up), `retry_after_too_long` (the server asked
 * for a wait beyond MAX_RETRY_AFTER_SECONDS), `body_not_replayable` (a stream body can be sent once).
 */
export type RetryStopReason =
  'not_retryable' | 'status_not_retried' | 'retries_exhausted' | 'retry_after_too_long' | 'body_not_replayable';

/** The stop reason in words, for messages and logs. */
export const RETRY_STOP_REASONS: Record<RetryStopReason, string> = {
  not_retryable: 'not retryable',
  status_not_retried: 'not retried for this status',
  retries_exhausted: 'retries exhausted',
  retry_after_too_long: 'Retry-After too long',
  body_not_replayable: 'the body is a stream that cannot be sent again',
};

/** The table's cap for this failure, or null when the table says not to retry it at all. */
export function retryCap(status: number | null, retryable: boolean): number | null {
  if (status === null) return RETRY_CAPS.noResponse;
  if (!retryable) return null;
  if (status === 429 || status === 503 || status === 504) return RETRY_CAPS.throttledOrUnavailable;
  if (status === 500 || status === 502) return RETRY_CAPS.serverError;
  if (status === 409) return RETRY_CAPS.conflict;
  // 403 offline_grace_expired: the same request fails again until a new token is fetched, so this
  // generic loop does not resend it; license.retrieve({ revalidate }) validates online and retries.
  return null;
}

/**
 * Exponential backoff with "equal jitter": the n-th retry waits between half and all of
 * min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2^n), so the lower bounds are 250 ms, 500 ms, 1 s.
 */
export function backoffDelayMs(retriesSoFar: number, random: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retriesSoFar);
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

export function decideRetry(context: RetryContext): RetryDecision {
  const cap = retryCap(context.status, context.retryable);
  if (cap === null) return { retry: false, reason: context.retryable ? 'status_not_retried' : 'not_retryable' };
  const limit = Math.min(cap, context.maxRetries ?? cap);
  if (context.retriesSoFar >= limit) return { retry: false, reason: 'retries_exhausted' };
  const backoff = backoffDelayMs(context.retriesSoFar, context.random);
  if (context.retryAfterSeconds === null) return { retry: true, delayMs: backoff };
  if (context.retryAfterSeconds > MAX_RETRY_AFTER_SECONDS) return { retry: false, reason: 'retry_after_too_long' };
  // Retry-After is a lower bound; the jittered backoff keeps many clients from retrying in step.
  return { retry: true, delayMs: Math.max(context.retryAfterSeconds * 1000, backoff) };
}

/** Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function parseRetryAfter(header: string | null, nowMs: number): number | null {
  if (header === null || header.trim() === '') return null;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const dateMs = Date.parse(value);
  if (Number.isNaN(dateMs)) return null;
  return Math.max(0, (dateMs - nowMs) / 1000);
}
