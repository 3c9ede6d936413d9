// Unit tests of the pure retry policy: one case per row of table 7.11, plus the backoff arithmetic.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backoffDelayMs, decideRetry, parseRetryAfter, retryCap, RETRY_CAPS } from '../src/retry.js';
import type { RetryContext } from '../src/retry.js';

const context = (overrides: Partial<RetryContext>): RetryContext => ({
  retriesSoFar: 0,
  status: 500,
  retryable: true,
  retryAfterSeconds: null,
  random: 0,
  ...overrides,
});

/** How many retries the policy allows for a failure that repeats for ever. */
function retriesAllowed(overrides: Partial<RetryContext>): number {
  let retries = 0;
  while (decideRetry(context({ ...overrides, retriesSoFar: retries })).retry) retries += 1;
  return retries;
}

describe('retry policy (table 7.11)', () => {
  test('retryable true with 429, 503 or 504: up to 3 retries', () => {
    for (const status of [429, 503, 504]) assert.equal(retriesAllowed({ status }), 3, `status ${status}`);
  });

  test('retryable true with 500 or 502: up to 2 retries', () => {
    for (const status of [500, 502]) assert.equal(retriesAllowed({ status }), 2, `status ${status}`);
  });

  test('retryable false: no retry, whatever the status', () => {
    for (const status of [400, 401, 402, 403, 404, 409, 422, 429, 500, 503]) {
      assert.deepEqual(decideRetry(context({ status, retryable: false })), { retry: false, reason: 'not_retryable' });
    }
  });

  test('no response (dropped connection or timeout): up to 2 retries', () => {
    assert.equal(retriesAllowed({ status: null }), 2);
  });

  test('retryable true with 409 (resource_locked): up to 2 retries; other 4xx are not retried', () => {
    assert.equal(retriesAllowed({ status: 409 }), 2);
    assert.deepEqual(decideRetry(context({ status: 403 })), { retry: false, reason: 'status_not_retried' });
    assert.equal(retryCap(422, true), null);
  });

  test('offline_grace_expired: one retry, made by license.retrieve after validating online (not by the generic loop)', () => {
    assert.equal(RETRY_CAPS.offlineGraceExpired, 1);
    assert.equal(retryCap(403, true), null);
  });

  test('maxRetries lowers the caps but never raises them', () => {
    assert.equal(retriesAllowed({ status: 429, maxRetries: 1 }), 1);
    assert.equal(retriesAllowed({ status: 429, maxRetries: 0 }), 0);
    assert.equal(retriesAllowed({ status: 500, maxRetries: 10 }), 2);
  });

  test('exponential backoff with equal jitter: [250, 500] ms, then [500, 1000], then [1000, 2000]', () => {
    assert.deepEqual(
      [0, 1, 2].map((n) => backoffDelayMs(n, 0)),
      [250, 500, 1000],
    );
    assert.deepEqual(
      [0, 1, 2].map((n) => backoffDelayMs(n, 0.999999)),
      [500, 1000, 2000],
    );
    assert.equal(backoffDelayMs(10, 0.5), 6000, 'capped at 8 s');
  });

  test('Retry-After is honoured as a lower bound on the delay', () => {
    assert.deepEqual(decideRetry(context({ status: 429, retryAfterSeconds: 2 })), { retry: true, delayMs: 2000 });
    assert.deepEqual(decideRetry(context({ status: 503, retryAfterSeconds: 0, random: 0 })), {
      retry: true,
      delayMs: 250,
    });
    assert.deepEqual(decideRetry(context({ status: 429, retryAfterSeconds: 60 })), { retry: true, delayMs: 60_000 });
  });

  test('Retry-After over 60 s is raised at once', () => {
    assert.deepEqual(decideRetry(context({ status: 429, retryAfterSeconds: 61 })), {
      retry: false,
      reason: 'retry_after_too_long',
    });
  });

  test('parseRetryAfter reads delta-seconds and HTTP dates, and ignores junk', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('7', now), 7);
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now), 30);
    assert.equal(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter(null, now), null);
  });
});
