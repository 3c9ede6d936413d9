// Failed sign-ins per minute, per IP and per email, in Redis (so the limit holds across API
// instances), over a sliding minute: exactly "the 11th wrong password within 60 s" is refused.
// Password reset requests are counted the same way (they send mail), on counters of their own.
import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { REDIS, type RedisClient } from '../common/redis/redis.module';

const WINDOW_MS = 60_000;

// An attempt is reserved before the password is checked (so parallel guesses cannot slip past the
// count) and given back when it succeeds. Returns 0 when reserved, else the ms until a slot frees.
const RESERVE = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local wait = 0
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= limit then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    local free = tonumber(oldest[2]) + window - now
    if free > wait then wait = free end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
end
return 0`;

type ReserveCommand = (...args: (string | number)[]) => Promise<number>;

export interface SignInAttempt {
  keys: string[];
  id: string;
}

@Injectable()
export class SignInLimiter {
  private readonly reserveCommand: ReserveCommand;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    redis.defineCommand('mjSignInReserve', { lua: RESERVE });
    this.reserveCommand = (redis as unknown as { mjSignInReserve: ReserveCommand }).mjSignInReserve.bind(redis);
  }

  /** Counts an attempt against the IP and the email, or refuses it (429) when either is spent. */
  async reserve(purpose: 'signin' | 'reset', ip: string, email: string): Promise<SignInAttempt> {
    // Emails are not kept in Redis in the clear.
    const emailHash = createHash('sha256').update(email).digest('base64url');
    const prefix = `${this.config.redisPrefix}:${purpose}`;
    const keys = [`${prefix}:ip:${ip}`, `${prefix}:email:${emailHash}`];
    const id = randomUUID();
    const limit = this.config.signInAttemptsPerMinute;
    const waitMs = Number(await this.reserveCommand(keys.length, ...keys, Date.now(), WINDOW_MS, limit, id));
    if (waitMs > 0) {
      const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ApiError('rate_limit_exceeded', {
        message:
          purpose === 'signin'
            ? `Too many failed sign-ins. Wait ${retryAfter} seconds, then try again (or reset your password).`
            : `Too many password reset requests. Wait ${retryAfter} seconds, then try again.`,
        details: { limit, window_seconds: WINDOW_MS / 1000, retry_after_seconds: retryAfter },
      });
    }
    return { keys, id };
  }

  /** A successful sign-in does not count. */
  async release(attempt: SignInAttempt): Promise<void> {
    await Promise.all(attempt.keys.map((key) => this.redis.zrem(key, attempt.id)));
  }
}
