// The worker's presence in its region: every HEARTBEAT_MS it stamps its id in the region's worker set
// (the API answers region_unavailable for a region with no fresh stamp) and names its region among the
// regions the metrics read. Stamps older than 5 minutes are dropped, so a worker that died unannounced
// leaves the set by itself.
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../common/config/config';
import { newId } from '../../common/ids';
import { PeriodicTask } from '../../common/periodic';
import { regionsKey, workersKey } from '../../queues/keys';
import { createRedis, type RedisClient } from '../../common/redis/redis.module';

const HEARTBEAT_MS = 10_000;
const FORGOTTEN_AFTER_MS = 5 * 60_000;

@Injectable()
export class WorkerHeartbeat implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerHeartbeat.name);
  /** This process's opaque id: in the region's worker set and on each item it runs (items[i].worker). */
  readonly id = newId('wkr');
  private readonly task = new PeriodicTask('heartbeat', this.logger, () => this.beat());
  private commands?: RedisClient;
  private stopped = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async onApplicationBootstrap(): Promise<void> {
    this.commands = createRedis(this.config, 'worker', 'commands');
    // Reconnected (e.g. Redis restarted and lost every key): announce this worker at once rather than
    // at the next beat, so the region does not answer region_unavailable for up to HEARTBEAT_MS.
    this.commands.on('ready', () => {
      // Not once stopping: a reconnect (a Redis failover) would announce a worker that takes no more work.
      if (this.stopped) return;
      this.beat().catch((error: unknown) => this.logger.warn({ err: error }, 'heartbeat after reconnect failed'));
    });
    await this.beat();
    this.task.start(HEARTBEAT_MS);
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    this.task.stop();
  }

  /** After the consumer has stopped (MediaWorker, before this hook): this worker takes no more work. */
  async onApplicationShutdown(): Promise<void> {
    // Leaving the region's worker set early is a courtesy: unreachable Redis forgets us after 5 minutes.
    await this.commands
      ?.zrem(workersKey(this.config, this.config.region), this.id)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not leave the worker set'));
    this.commands?.disconnect();
  }

  private async beat(): Promise<void> {
    const key = workersKey(this.config, this.config.region);
    await this.commands!.multi()
      .zadd(key, Date.now(), this.id)
      .zremrangebyscore(key, '-inf', Date.now() - FORGOTTEN_AFTER_MS)
      .sadd(regionsKey(this.config), this.config.region)
      .exec();
  }
}
