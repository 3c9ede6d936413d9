import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { REDIS } from '../redis/redis.module';

export interface RateLimitResult {
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (at least 1). */
  resetSeconds: number;
  exceeded: boolean;
}

// Fixed 1-second windows counted in Redis, so the limit holds across every API instance. One round
// trip: INCR the window's counter and set its expiry when it is new.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

@Injectable()
export class RateLimiter {
  static readonly WINDOW_SECONDS = 1;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async hit(tracker: string, limit: number): Promise<RateLimitResult> {
    const windowMs = RateLimiter.WINDOW_SECONDS * 1000;
    const now = Date.now();
    const window = Math.floor(now / windowMs);
    const key = `${this.config.redisPrefix}:rl:${tracker}:${window}`;
    const count = Number(await this.redis.eval(HIT, 1, key, String(windowMs * 2)));
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
    return { limit, remaining: Math.max(0, limit - count), resetSeconds, exceeded: count > limit };
  }
}
