// When a failed delivery is tried again (docs/api-decisions.md §6): WEBHOOK_RETRY_SCHEDULE with ±10 % jitter, and
// a receiver's Retry-After on 429/503 honoured up to a cap.

/** A receiver cannot push its next attempt further out than this, whatever its Retry-After says. */
export const MAX_RETRY_AFTER_SECONDS = 3600;
const JITTER = 0.1;

/**
 * Milliseconds to wait before the next attempt after `attemptsMade` attempts, or null when the
 * schedule is used up (the delivery has failed). Entry n of the schedule is the delay before
 * attempt n+1, so the schedule's length is the number of attempts.
 */
export function nextAttemptDelayMs(
  schedule: readonly number[],
  attemptsMade: number,
  options: { retryAfterSeconds?: number | null; random?: () => number } = {},
): number | null {
  if (attemptsMade >= schedule.length) return null;
  const random = options.random ?? Math.random;
  const scheduled = schedule[attemptsMade] * 1000 * (1 - JITTER + 2 * JITTER * random());
  const retryAfter = options.retryAfterSeconds;
  const asked =
    retryAfter === null || retryAfter === undefined ? 0 : Math.min(retryAfter, MAX_RETRY_AFTER_SECONDS) * 1000;
  return Math.round(Math.max(scheduled, asked));
}

/** Retry-After as seconds from `now`: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now) / 1000));
}
