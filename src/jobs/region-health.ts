import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { workersKey } from '../queues/keys';
import { REDIS as REDIS_TOKEN, type RedisClient } from '../common/redis/redis.module';

export const HEARTBEAT_WINDOW_MS = 30_000;
/**
 * How long a live worker, once seen, is believed without asking Redis again. Every submit checks its
 * region (step 3), and at hundreds of submits a second that read was a third of a submit's Redis
 * commands; a second of belief moves when a region with no workers left starts refusing by at most a
 * second (a worker that stops beating is already believed for 30 s). A refusal is not remembered: the
 * first submit after a worker's heartbeat is accepted.
 */
export const LIVE_WORKER_BELIEVED_MS = 1_000;

/** A region is healthy while at least one of its workers sent a heartbeat in the last 30 s. */
@Injectable()
export class RegionHealth {
  /** Per region, until when (epoch ms) a worker seen live is still believed; only healthy verdicts. */
  private readonly healthyUntil = new Map<string, number>();

  constructor(
    @Inject(REDIS_TOKEN) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Workers of the region with a fresh heartbeat (for the metrics). */
  liveWorkers(region: string): Promise<number> {
    return this.redis.zcount(workersKey(this.config, region), Date.now() - HEARTBEAT_WINDOW_MS, '+inf');
  }

  async isHealthy(region: string): Promise<boolean> {
    const now = Date.now();
    if ((this.healthyUntil.get(region) ?? 0) > now) return true;
    // The newest heartbeat: the region stays healthy until it is 30 s old, so it is never believed longer.
    const [, newest] = await this.redis.zrevrangebyscore(
      workersKey(this.config, region),
      '+inf',
      now - HEARTBEAT_WINDOW_MS,
      'WITHSCORES',
      'LIMIT',
      0,
      1,
    );
    if (newest === undefined) {
      this.healthyUntil.delete(region);
      return false;
    }
    this.healthyUntil.set(region, Math.min(now + LIVE_WORKER_BELIEVED_MS, Number(newest) + HEARTBEAT_WINDOW_MS));
    return true;
  }
}
