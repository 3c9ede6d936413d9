import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { workersKey } from '../common/queues';
import { REDIS as REDIS_TOKEN, type RedisClient } from '../common/redis/redis.module';

export const HEARTBEAT_WINDOW_MS = 30_000;

/** A region is healthy while at least one of its workers sent a heartbeat in the last 30 s. */
@Injectable()
export class RegionHealth {
  constructor(
    @Inject(REDIS_TOKEN) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Workers of the region with a fresh heartbeat (for the metrics). */
  liveWorkers(region: string): Promise<number> {
    return this.redis.zcount(workersKey(this.config, region), Date.now() - HEARTBEAT_WINDOW_MS, '+inf');
  }

  async isHealthy(region: string): Promise<boolean> {
    const alive = await this.redis.zrangebyscore(
      workersKey(this.config, region),
      Date.now() - HEARTBEAT_WINDOW_MS,
      '+inf',
      'LIMIT',
      0,
      1,
    );
    return alive.length > 0;
  }
}
