import { MAX_RETRY_AFTER_SECONDS, nextAttemptDelayMs, parseRetryAfter } from './retry-policy';
import { judgeStatus } from './webhook-sender';

const DEFAULT = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];

describe('webhook retry policy', () => {
  it('entry n is the delay before attempt n+1; the schedule length is the number of attempts', () => {
    const middle = () => 0.5;
    expect(DEFAULT.map((_, made) => nextAttemptDelayMs(DEFAULT, made, { random: middle }))).toEqual(
      DEFAULT.map((s) => s * 1000),
    );
    expect(nextAttemptDelayMs(DEFAULT, 8)).toBeNull();
    expect(nextAttemptDelayMs([0, 1, 1, 1], 4)).toBeNull();
  });

  it('adds ±10 % jitter', () => {
    expect(nextAttemptDelayMs(DEFAULT, 2, { random: () => 0 })).toBe(270_000);
    expect(nextAttemptDelayMs(DEFAULT, 2, { random: () => 1 })).toBe(330_000);
    for (let i = 0; i < 100; i++) {
      const delay = nextAttemptDelayMs(DEFAULT, 1)!;
      expect(delay).toBeGreaterThanOrEqual(4500);
      expect(delay).toBeLessThanOrEqual(5500);
    }
  });

  it('waits at least a Retry-After, capped', () => {
    expect(nextAttemptDelayMs([0, 1, 1], 1, { retryAfterSeconds: 3, random: () => 0.5 })).toBe(3000);
    expect(nextAttemptDelayMs([0, 60], 1, { retryAfterSeconds: 3, random: () => 0.5 })).toBe(60_000);
    expect(nextAttemptDelayMs([0, 1], 1, { retryAfterSeconds: 10 ** 9, random: () => 0.5 })).toBe(
      MAX_RETRY_AFTER_SECONDS * 1000,
    );
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe('judging a receiver answer', () => {
  it('2xx delivers, 410 disables, a redirect or any other status is retried', () => {
    expect(judgeStatus(200).verdict).toBe('delivered');
    expect(judgeStatus(204).verdict).toBe('delivered');
    expect(judgeStatus(410).verdict).toBe('gone');
    expect(judgeStatus(302)).toMatchObject({
      verdict: 'retry',
      error: expect.stringContaining('redirects are not followed'),
    });
    expect(judgeStatus(500)).toMatchObject({
      verdict: 'retry',
      error: 'The endpoint answered HTTP 500.',
      retryAfterSeconds: null,
    });
  });

  it('reads Retry-After only on 429 and 503', () => {
    expect(judgeStatus(429, '7').retryAfterSeconds).toBe(7);
    expect(judgeStatus(503, '7').retryAfterSeconds).toBe(7);
    expect(judgeStatus(500, '7').retryAfterSeconds).toBeNull();
  });
});
