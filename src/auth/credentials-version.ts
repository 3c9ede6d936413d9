import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { REDIS, type RedisClient } from '../common/redis/redis.module';

/**
 * One value in Redis that changes whenever something an API key resolves to changes (a key revoked
 * or rotated, an account suspended or moved to another plan). Every API instance reads it on each
 * request in the rate limiter's round trip and drops its cached key lookups when it moved, so a
 * revocation is refused by every instance on its very next request without a query per request.
 * A fresh random value rather than a counter: after Redis loses its data no old value can return.
 */
@Injectable()
export class CredentialsVersion {
  readonly key: string;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.key = `${config.redisPrefix}:credentials-version`;
  }

  /** Call after the change has committed, before answering the request that made it. */
  async changed(): Promise<void> {
    await this.redis.set(this.key, randomUUID());
  }
}
