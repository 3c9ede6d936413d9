import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';

export const REDIS = Symbol('REDIS');

/**
 * A Redis client that fails fast while Redis is unreachable (no offline queue, one retry), so a
 * request gets a 503 envelope at once instead of hanging; it reconnects by itself afterwards.
 *
 * The commands of one tick go out in one write (auto-pipelining): under load a burst of requests'
 * rate-limit calls were one socket write each, ~20 µs of a job read's ~80 µs of CPU. ioredis sends
 * the next batch only when the previous one has answered, so a command may wait one timeout behind a
 * Redis that stopped answering before its own starts: 1 s each keeps a request's 503 within ~2 s, as
 * one 2 s timeout did without batching (test/foundation/outage.e2e-spec.ts, "stops answering").
 */
export function createRedis(config: AppConfig, name: string): Redis {
  const client = new Redis(config.redisUrl, {
    connectionName: `mediajobs-${name}`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    enableAutoPipelining: true,
  });
  // Connection errors surface on the commands that fail; the event itself only needs a listener.
  client.on('error', () => undefined);
  return client;
}

/**
 * Waits (at most `ms`) for the first connection. Without an offline queue a command sent before it
 * fails at once: a one-shot process such as the admin CLI would fail its very first command. A
 * Redis that is down does not stop start-up; requests get 503 until it answers.
 */
async function firstConnection(client: Redis, ms: number): Promise<Redis> {
  if (client.status === 'ready') return client;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    client.once('ready', done).once('error', done);
  });
  return client;
}

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => firstConnection(createRedis(config, 'api'), 2500),
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
