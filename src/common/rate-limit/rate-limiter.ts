import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { REDIS, type RedisClient } from '../redis/redis.module';

export interface RateLimitResult {
  limit: number;
  /** Requests counted in the current window, this one included (0 when a gate stopped it uncounted). */
  count: number;
  remaining: number;
  /** Seconds until the current window ends (at least 1). */
  resetSeconds: number;
  exceeded: boolean;
  /** The value of `alsoRead`, read in the same round trip ('' when unset). */
  observed: string;
  /** The gate's count, read in the same round trip (0 without a gate, or when unset). */
  gate: number;
}

export interface HitOptions {
  /** One more key to read for the caller in the same round trip (see CredentialsVersion). */
  alsoRead?: string;
  /**
   * A count kept by someone else (CredentialAttempts' failed-credential budget) that stops the request
   * before it is counted once it reaches `limit`: the caller then refuses it on the gate's own terms.
   */
  gate?: { key: string; limit: number };
}

// Fixed 1-second windows counted in Redis, so the limit holds across every API instance. One round
// trip: read the gate (if any) and stop there when it is closed, INCR the window's counter, set its
// expiry when it is new, and read one more key for the caller (the credentials version, see
// CredentialsVersion) so that neither check costs an extra trip.
const HIT = `
local gate = 0
if KEYS[3] then gate = tonumber(redis.call('GET', KEYS[3]) or '0') end
local observed = ''
if KEYS[2] then observed = redis.call('GET', KEYS[2]) or '' end
if KEYS[3] and gate >= tonumber(ARGV[2]) then return {0, observed, gate} end
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, observed, gate}`;

type Reply = Promise<[number, string, number]>;
type HitCommand = (window: string, windowMs: string) => Reply;
type HitAndReadCommand = (window: string, read: string, windowMs: string) => Reply;
type GatedHitCommand = (window: string, read: string, gate: string, windowMs: string, gateLimit: string) => Reply;

@Injectable()
export class RateLimiter {
  static readonly WINDOW_SECONDS = 1;
  private readonly hitOnly: HitCommand;
  private readonly hitAndRead: HitAndReadCommand;
  private readonly gatedHit: GatedHitCommand;

  constructor(
    @Inject(REDIS) redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // defineCommand sends EVALSHA (the script body travels once per connection, not per request).
    redis.defineCommand('mjRateHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('mjRateHitRead', { numberOfKeys: 2, lua: HIT });
    redis.defineCommand('mjRateHitGated', { numberOfKeys: 3, lua: HIT });
    const commands = redis as unknown as {
      mjRateHit: HitCommand;
      mjRateHitRead: HitAndReadCommand;
      mjRateHitGated: GatedHitCommand;
    };
    this.hitOnly = commands.mjRateHit.bind(redis);
    this.hitAndRead = commands.mjRateHitRead.bind(redis);
    this.gatedHit = commands.mjRateHitGated.bind(redis);
  }

  async hit(tracker: string, limit: number, options: HitOptions = {}): Promise<RateLimitResult> {
    const { alsoRead, gate } = options;
    const windowMs = RateLimiter.WINDOW_SECONDS * 1000;
    const now = Date.now();
    const window = Math.floor(now / windowMs);
    const key = `${this.config.redisPrefix}:rl:${tracker}:${window}`;
    const expiry = String(windowMs * 2);
    const [count, observed, gateCount] = gate
      ? // Without alsoRead, the read slot reads the window's own counter (its value is dropped).
        await this.gatedHit(key, alsoRead ?? key, gate.key, expiry, String(gate.limit))
      : alsoRead
        ? await this.hitAndRead(key, alsoRead, expiry)
        : await this.hitOnly(key, expiry);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
    return {
      ...RateLimiter.judge(Number(count), limit),
      resetSeconds,
      observed: alsoRead ? observed : '',
      gate: Number(gateCount),
    };
  }

  /** The verdict for `count` requests in a window against `limit` (again, when the limit changed). */
  static judge(count: number, limit: number): Pick<RateLimitResult, 'limit' | 'count' | 'remaining' | 'exceeded'> {
    return { limit, count, remaining: Math.max(0, limit - count), exceeded: count > limit };
  }
}
