// The plan's cap on open event streams per account, held across API instances: a sorted set per account
// in Redis of the streams open now, each with a lease its instance renews while the stream lives, so the
// places of an instance that died free themselves when their leases run out.
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { REDIS, type RedisClient } from '../common/redis/redis.module';

/** A stream's place lasts this long unless renewed; renewed every RENEW_MS while the stream is open. */
const LEASE_MS = 60_000;
export const RENEW_MS = 20_000;

/** Drops lapsed places, then takes one if fewer than the limit are held; answers how many are held. */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[2]) then return -held end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return held + 1`;

export interface StreamSlot {
  accountId: string;
  id: string;
}

@Injectable()
export class StreamSlots {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A place for one more stream of the account, or how many it already holds (all of `limit`). */
  async take(accountId: string, limit: number): Promise<{ slot: StreamSlot } | { held: number }> {
    const id = randomUUID();
    const now = Date.now();
    const result = Number(
      await this.redis.eval(TAKE, 1, this.key(accountId), now, limit, now + LEASE_MS, id, LEASE_MS),
    );
    return result < 0 ? { held: -result } : { slot: { accountId, id } };
  }

  async release(slot: StreamSlot): Promise<void> {
    await this.redis.zrem(this.key(slot.accountId), slot.id);
  }

  /** Renews the leases of the streams this instance holds open. */
  async renew(slots: Iterable<StreamSlot>): Promise<void> {
    const pipeline = this.redis.pipeline();
    const until = Date.now() + LEASE_MS;
    for (const slot of slots) {
      pipeline.zadd(this.key(slot.accountId), 'XX', until, slot.id);
      pipeline.pexpire(this.key(slot.accountId), LEASE_MS);
    }
    await pipeline.exec();
  }

  private key(accountId: string): string {
    return `${this.config.redisPrefix}:event-streams:${accountId}`;
  }
}
