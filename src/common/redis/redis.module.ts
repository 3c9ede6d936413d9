import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';

export const REDIS = Symbol('REDIS');

/**
 * What a connection is for, which decides how it waits for Redis:
 * - `api`: the API's shared client. It fails fast while Redis is unreachable (no offline queue, one
 *   retry), so a request gets a 503 envelope at once instead of hanging. The commands of one tick go
 *   out in one write (auto-pipelining): under load a burst of requests' rate-limit calls were one
 *   socket write each, ~20 µs of a job read's ~80 µs of CPU. ioredis sends the next batch only when
 *   the previous one has answered, so a command may wait one timeout behind a Redis that stopped
 *   answering before its own starts: 1 s each keeps a request's 503 within ~2 s, as one 2 s timeout
 *   did without batching (test/foundation/outage.e2e-spec.ts, "stops answering").
 * - `producer`: a BullMQ queue in the API (submits, the queue board): fails fast like `api`; BullMQ
 *   runs its own scripts, so no command timeout or pipelining.
 * - `commands`: a worker's own commands (heartbeat): held while reconnecting, one retry each, so a
 *   command sent in an outage fails rather than waits for ever (shutdown must not hang on it).
 * - `blocking`: BullMQ consumers and subscribers, which wait on Redis by design (BullMQ requires no
 *   per-request retry cap).
 */
export type RedisRole = 'api' | 'producer' | 'commands' | 'blocking';

const ROLE_OPTIONS: Record<RedisRole, Omit<RedisOptions, 'retryStrategy'>> = {
  api: {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 1000,
    enableAutoPipelining: true,
  },
  producer: { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 },
  commands: { maxRetriesPerRequest: 1 },
  blocking: { maxRetriesPerRequest: null },
};

/**
 * The options of every Redis connection this codebase opens, ioredis clients and BullMQ's alike (the
 * one place they are decided). Every role reconnects within 2 s of Redis coming back: BullMQ's own
 * default backs off to 20 s, so after an outage of ~20 s the API's queue kept refusing submits for up
 * to 20 s more while everything else worked again (test/jobs/queue-reconnect.e2e-spec.ts).
 */
export function redisOptions(
  config: AppConfig,
  role: RedisRole,
): Omit<RedisOptions, 'retryStrategy'> & { retryStrategy: (times: number) => number } {
  const url = new URL(config.redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username || undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    retryStrategy: (times: number) => Math.min(times * 200, 2000),
    ...ROLE_OPTIONS[role],
  };
}

/** A Redis client (named `mediajobs-<name>` in CLIENT LIST); every ioredis client is made here. */
export function createRedis(config: AppConfig, name: string, role: RedisRole = 'api'): Redis {
  const client = new Redis({ connectionName: `mediajobs-${name}`, ...redisOptions(config, role) });
  // Connection errors surface on the commands that fail (or, for a subscriber, as a lost
  // subscription that reconnects by itself); the event itself only needs a listener.
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
