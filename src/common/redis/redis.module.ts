import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';

export const REDIS = Symbol('REDIS');

/**
 * A Redis client that fails fast while Redis is unreachable (no offline queue, one retry), so a
 * request gets a 503 envelope at once instead of hanging; it reconnects by itself afterwards.
 */
export function createRedis(config: AppConfig, name: string): Redis {
  const client = new Redis(config.redisUrl, {
    connectionName: `mediajobs-${name}`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  // Connection errors surface on the commands that fail; the event itself only needs a listener.
  client.on('error', () => undefined);
  return client;
}

@Global()
@Module({
  providers: [{ provide: REDIS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createRedis(config, 'api') }],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
