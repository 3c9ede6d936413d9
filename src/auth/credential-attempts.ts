// The failed-credential budget per IP (API keys, the operator token — also at the queue board —, session cookies): the one owner of
// that rule. It is checked BEFORE any credential is verified, so once an IP has spent its budget every
// credential attempt from it is refused with 429 until the window passes, the right one included — a
// limiter that answers only wrong guesses tells a guesser which guess was right.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { REDIS, type RedisClient } from '../common/redis/redis.module';

/** Failures are counted in fixed windows of this length (the window of IP_RATE_LIMIT). */
export const FAILURE_WINDOW_SECONDS = 1;
const WINDOW_MS = FAILURE_WINDOW_SECONDS * 1000;
/** Local counters kept while Redis is unreachable (one per IP seen in the window). */
const LOCAL_MAX_ENTRIES = 10_000;
const OUTAGE_LOG_INTERVAL_MS = 10_000;

/**
 * Counts refused credentials per IP in Redis (so the budget holds across API instances). Valid
 * credentials never count, so a busy client behind one address is not limited by its own success.
 * For keys and sessions (check, then fail), two parallel guesses may both pass the check before either
 * is counted: the budget can be overrun by the guesses in flight at that instant, never by a sequence
 * of guesses — reserving a place first would refuse a legitimate burst of parallel requests with a key
 * not yet cached. The operator token has no such bursts and reserves (see `reserve`).
 *
 * While Redis is unreachable the budget falls back to a per-instance counter instead of failing
 * open or closed: failing closed would lock the operator out during the very outage they must
 * repair (the admin API keeps no state in Redis), and failing open would make the outage a window
 * for unlimited guessing of the operator token.
 */
@Injectable()
export class CredentialAttempts {
  private readonly logger = new Logger(CredentialAttempts.name);
  private readonly local = new Map<string, { window: number; failures: number }>();
  private lastOutageLog = 0;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * 429 rate_limit_exceeded when `ip` has used up its budget in the current window. With `alsoRead`,
   * that key is read in the same round trip and returned (undefined while Redis is unreachable).
   */
  async check(ip: string, alsoRead?: string): Promise<string | undefined> {
    const budget = this.budget(ip);
    let failures: number | undefined;
    let observed: string | undefined;
    try {
      if (alsoRead) {
        const [count, value] = await this.redis.mget(budget.key, alsoRead);
        failures = Number(count ?? 0);
        observed = value ?? '';
      } else {
        failures = Number((await this.redis.get(budget.key)) ?? 0);
      }
    } catch (error) {
      this.noteOutage(error);
    }
    this.enforce(ip, failures);
    return observed;
  }

  /**
   * The Redis key of `ip`'s failure count in this window and the budget, for a caller that reads the
   * count in its own round trip (the rate limiter's gate, see AccessGuard) and then calls `enforce`.
   */
  budget(ip: string): { key: string; limit: number } {
    return { key: this.key(ip, this.now().window), limit: this.config.ipRateLimitPerSecond };
  }

  /**
   * 429 when `failures`, read from Redis, spent `ip`'s budget; `undefined` means Redis was unreachable,
   * and the count this instance kept meanwhile decides.
   */
  enforce(ip: string, failures: number | undefined): void {
    const { window, resetSeconds } = this.now();
    const limit = this.config.ipRateLimitPerSecond;
    if ((failures ?? this.localFailures(ip, window)) < limit) return;
    throw new ApiError('rate_limit_exceeded', {
      message: `Too many failed credentials from this address. Wait ${resetSeconds} seconds, then try again with a valid credential.`,
      details: { limit, window_seconds: FAILURE_WINDOW_SECONDS, retry_after_seconds: resetSeconds },
    });
  }

  /** The check when the round trip that read the count (see `budget`) failed: the local count decides. */
  checkWithoutRedis(ip: string, error: unknown): void {
    this.noteOutage(error);
    this.enforce(ip, undefined);
  }

  /**
   * For a credential that is cheap to verify and rarely sent (the operator token): takes this attempt's
   * place in `ip`'s budget BEFORE it is compared — 429 when the budget is spent — and gives it back when
   * the credential proves right (`refund`). Unlike check-then-fail, parallel guesses cannot overrun the
   * budget: each one's place is counted atomically before any is compared.
   */
  async reserve(ip: string): Promise<{ refund(): Promise<void> }> {
    const { window } = this.now();
    const key = this.key(ip, window);
    const counted = await this.count(ip, window);
    // The failures before this attempt: the count it made, less itself.
    this.enforce(ip, counted === undefined ? this.localFailures(ip, window) - 1 : counted - 1);
    return {
      refund: async () => {
        if (counted !== undefined) {
          await this.redis.decr(key).catch((error: unknown) => this.noteOutage(error));
          return;
        }
        const entry = this.local.get(ip);
        if (entry && entry.window === window && entry.failures > 0) entry.failures -= 1;
      },
    };
  }

  /** Counts a refused credential (missing, malformed, unknown, expired, revoked) against `ip`. */
  async fail(ip: string): Promise<void> {
    await this.count(ip, this.now().window);
  }

  /**
   * One more attempt against `ip` in `window`: in Redis (returns the window's count), or, while Redis
   * is unreachable, in this instance's local count (returns undefined).
   */
  private async count(ip: string, window: number): Promise<number | undefined> {
    const key = this.key(ip, window);
    try {
      const [[, count]] = (await this.redis
        .multi()
        .incr(key)
        .pexpire(key, WINDOW_MS * 2)
        .exec()) as [[unknown, number], unknown];
      return Number(count);
    } catch (error) {
      this.noteOutage(error);
      this.countLocally(ip, window);
      return undefined;
    }
  }

  private now(): { window: number; resetSeconds: number } {
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    return { window, resetSeconds: Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)) };
  }

  private key(ip: string, window: number): string {
    return `${this.config.redisPrefix}:authfail:${ip}:${window}`;
  }

  private localFailures(ip: string, window: number): number {
    const entry = this.local.get(ip);
    return entry && entry.window === window ? entry.failures : 0;
  }

  private countLocally(ip: string, window: number): void {
    const failures = this.localFailures(ip, window) + 1;
    this.local.delete(ip);
    if (this.local.size >= LOCAL_MAX_ENTRIES) {
      // Maps iterate in insertion order: drop the entry written longest ago.
      const oldest = this.local.keys().next().value;
      if (oldest !== undefined) this.local.delete(oldest);
    }
    this.local.set(ip, { window, failures });
  }

  private noteOutage(error: unknown): void {
    if (Date.now() - this.lastOutageLog < OUTAGE_LOG_INTERVAL_MS) return;
    this.lastOutageLog = Date.now();
    this.logger.warn({ err: error }, 'Redis unreachable: failed credentials are counted per instance until it is back');
  }
}
