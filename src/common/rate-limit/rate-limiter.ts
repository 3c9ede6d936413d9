import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { REDIS } from '../redis/redis.module';

export interface RateLimitResult {
  limit: number;
  /** Requests counted in the current window, this one included. */
  count: number;
  remaining: number;
  /** Seconds until the current window ends (at least 1). */
  resetSeconds: number;
  exceeded: boolean;
  /** The value of `alsoRead`, read in the same round trip ('' when unset). */
  observed: string;
}

// Fixed 1-second windows counted in Redis, so the limit holds across every API instance. One round
// trip: INCR the window's counter, set its expiry when it is new, and read one more key for the
// caller (the credentials version, see CredentialsVersion) so that check costs no extra trip.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local observed = ''
if KEYS[2] then observed = redis.call('GET', KEYS[2]) or '' end
return {count, observed}`;

type HitCommand = (window: string, windowMs: string) => Promise<[number, string]>;
type HitAndReadCommand = (window: string, read: string, windowMs: string) => Promise<[number, string]>;

@Injectable()
export class RateLimiter {
  static readonly WINDOW_SECONDS = 1;
  private readonly hitOnly: HitCommand;
  private readonly hitAndRead: HitAndReadCommand;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // defineCommand sends EVALSHA (the script body travels once per connection, not per request).
    redis.defineCommand('mjRateHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('mjRateHitRead', { numberOfKeys: 2, lua: HIT });
    const commands = redis as unknown as { mjRateHit: HitCommand; mjRateHitRead: HitAndReadCommand };
    this.hitOnly = commands.mjRateHit.bind(redis);
    this.hitAndRead = commands.mjRateHitRead.bind(redis);
  }

  async hit(tracker: string, limit: number, alsoRead?: string): Promise<RateLimitResult> {
    const windowMs = RateLimiter.WINDOW_SECONDS * 1000;
    const now = Date.now();
    const window = Math.floor(now / windowMs);
    const key = `${this.config.redisPrefix}:rl:${tracker}:${window}`;
    const [count, observed] = alsoRead
      ? await this.hitAndRead(key, alsoRead, String(windowMs * 2))
      : await this.hitOnly(key, String(windowMs * 2));
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
    return { ...RateLimiter.judge(Number(count), limit), resetSeconds, observed };
  }

  /** The verdict for `count` requests in a window against `limit` (again, when the limit changed). */
  static judge(count: number, limit: number): Pick<RateLimitResult, 'limit' | 'count' | 'remaining' | 'exceeded'> {
    return { limit, count, remaining: Math.max(0, limit - count), exceeded: count > limit };
  }
}
