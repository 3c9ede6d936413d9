import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { timeoutAfterPendingReplies } from './command-timeout';

export const REDIS = Symbol('REDIS');

/**
 * What a connection is for, which decides how it waits for Redis:
 * - `api`: the API's shared client. It fails fast while Redis is unreachable (no offline queue, one
 *   retry), so a request gets a 503 envelope at once instead of hanging. The commands of one tick go
 *   out in one write (auto-pipelining): under load a burst of requests' rate-limit calls were one
 *   socket write each, ~20 µs of a job read's ~80 µs of CPU. ioredis sends the next batch only when
 *   the previous one has answered, so a command may wait one timeout behind a Redis that stopped
 *   answering before its own starts: 1 s each keeps a request's 503 within ~2 s, as one 2 s timeout
 *   did without batching (test/foundation/outage.e2e-spec.ts, "stops answering"). The timeout is
 *   decided after replies already received are read, so a stall of the process itself is not taken
 *   for Redis's (command-timeout.ts).
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

/** A client of the one Redis (single node or sentinel-found master) or of a Redis Cluster: one command API. */
export type RedisClient = Redis | Cluster;

type RetryingOptions = Omit<RedisOptions, 'retryStrategy'> & { retryStrategy: (times: number) => number };

/** Back off to 2 s at most (see redisOptions). */
const reconnectDelay = (times: number) => Math.min(times * 200, 2000);

/**
 * What REDIS_URL says of every Redis node, whatever the topology: user, password, TLS (rediss:) and
 * database. Its host and port are the node's own only in the single-node form.
 */
function nodeAuth(config: AppConfig): Pick<RedisOptions, 'username' | 'password' | 'tls' | 'db'> {
  const url = new URL(config.redisUrl);
  return {
    username: url.username || undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
  };
}

/**
 * The options of every Redis connection this codebase opens to one node or to a sentinel-found
 * master, ioredis clients and BullMQ's alike (the one place they are decided; a cluster's are in
 * clusterOptions). Every role reconnects within 2 s of Redis coming back: BullMQ's own default backs
 * off to 20 s, so after an outage of ~20 s the API's queue kept refusing submits for up to 20 s more
 * while everything else worked again (test/jobs/queue-reconnect.e2e-spec.ts).
 *
 * Sentinel: ioredis asks the sentinels for the master of REDIS_SENTINEL_NAME on every (re)connect
 * (a killed, restarted or demoted master drops its connections, so clients find the new one). The
 * sentinels themselves are reached in plain TCP, with REDIS_SENTINEL_PASSWORD when set (for the
 * lookups and the failover detector alike: a sentinel that anyone may talk to lets anyone re-point the
 * master and receive our AUTH and traffic); REDIS_URL's user, password and TLS apply to the master.
 * See createRedis for the failover detector.
 */
export function redisOptions(config: AppConfig, role: RedisRole): RetryingOptions {
  const topology = config.redisTopology;
  const auth = nodeAuth(config);
  const where: RedisOptions =
    topology.kind === 'sentinel'
      ? {
          sentinels: topology.sentinels,
          name: topology.name,
          sentinelPassword: topology.password,
          role: 'master',
          enableTLSForSentinelMode: auth.tls !== undefined,
          sentinelRetryStrategy: reconnectDelay,
        }
      : (() => {
          const url = new URL(config.redisUrl);
          return { host: url.hostname, port: Number(url.port || 6379) };
        })();
  return { ...where, ...auth, retryStrategy: reconnectDelay, ...ROLE_OPTIONS[role] };
}

/**
 * A Redis Cluster client for `role`. ioredis splits the options: what a command may wait for (the
 * offline queue, auto-pipelining) is the cluster's, and it reconnects the cluster as a whole
 * (clusterRetryStrategy: its node connections do not reconnect by themselves, a lost node is found
 * again through a slots refresh). Connect and command timeouts and the retry cap are each node
 * connection's. A command sent to a master that just died is retried on its replica once the
 * cluster has promoted it (retryDelayOnFailover × maxRedirections, ~1.6 s by default; a request that
 * waits longer gets its 503 as in any outage).
 */
function clusterOptions(config: AppConfig, name: string, role: RedisRole, lazyConnect: boolean): ClusterOptions {
  const { enableOfflineQueue, enableAutoPipelining, ...node } = ROLE_OPTIONS[role];
  const { db: _db, ...auth } = nodeAuth(config);
  return {
    redisOptions: { connectionName: `mediajobs-${name}`, ...auth, ...node },
    enableOfflineQueue: enableOfflineQueue ?? true,
    enableAutoPipelining: enableAutoPipelining ?? false,
    clusterRetryStrategy: reconnectDelay,
    lazyConnect,
  };
}

/**
 * A Redis client (named `mediajobs-<name>` in CLIENT LIST); every ioredis client is made here. On a
 * cluster it is an ioredis Cluster, which answers the same commands (keys of one command share the
 * `{prefix}` hash tag: config/redis-config.ts keyPrefix) and subscribes through one of the nodes
 * (PUBLISH reaches every node of a cluster).
 */
export function createRedis(config: AppConfig, name: string, role: RedisRole = 'api'): RedisClient {
  timeoutAfterPendingReplies();
  const client =
    config.redisTopology.kind === 'cluster'
      ? createCluster(config, name, role)
      : new Redis({
          connectionName: `mediajobs-${name}`,
          ...redisOptions(config, role),
          // Our own clients also listen to the sentinels' +switch-master and reconnect at once, also when
          // the old master's socket would only time out (a partition). Not BullMQ's: it closes its clients
          // with QUIT, which leaves the detector's sentinel connections reconnecting for ever (ioredis
          // cleans them up on disconnect() only), so a stopped worker would never exit.
          failoverDetector: config.redisTopology.kind === 'sentinel',
        });
  // Connection errors surface on the commands that fail (or, for a subscriber, as a lost
  // subscription that reconnects by itself); the event itself only needs a listener.
  client.on('error', () => undefined);
  if (client instanceof Redis && config.redisTopology.kind === 'sentinel') reconnectUnlessClosed(client);
  return client;
}

/**
 * ioredis (5.x) ends a sentinel client for good when the failover detector's +switch-master arrives
 * while the client is already reconnecting after its master died: the detector disconnects the shared
 * connector, the connect under way then throws "Connection is closed." and the client is set to `end`
 * — every later command fails at once, and the API answered 503 until restarted
 * (test/scale/redis-sentinel.e2e-spec.ts, about one run in two). A client that ends without having been
 * closed by us connects again, after the usual reconnect delay.
 */
function reconnectUnlessClosed(client: Redis): void {
  let closedByUs = false;
  const quit = client.quit.bind(client);
  const disconnect = client.disconnect.bind(client);
  client.quit = ((...args: Parameters<Redis['quit']>) => {
    closedByUs = true;
    return quit(...args);
  }) as Redis['quit'];
  client.disconnect = (reconnect = false) => {
    if (!reconnect) closedByUs = true;
    disconnect(reconnect);
  };
  client.on('end', () => {
    if (closedByUs) return;
    setTimeout(() => {
      // A connect that fails is a connection error like any other (see the client's error listener):
      // ioredis retries it by its retryStrategy (reconnectDelay, without end) and the commands that fail
      // meanwhile report it; the rejected promise only repeats that first failure.
      if (!closedByUs && client.status === 'end') client.connect().catch(() => undefined);
    }, reconnectDelay(1)).unref();
  });
}

/**
 * A cluster client for BullMQ (queues.ts bullConnection). `lazyConnect` for a consumer: BullMQ
 * connects it itself (see consumerCluster).
 */
export function createCluster(config: AppConfig, name: string, role: RedisRole, lazyConnect = false): Cluster {
  if (config.redisTopology.kind !== 'cluster') throw new Error('createCluster: REDIS_CLUSTER_NODES is not set');
  const client = new Cluster(config.redisTopology.nodes, clusterOptions(config, name, role, lazyConnect));
  client.on('error', () => undefined);
  if (lazyConnect) {
    const copies: Cluster[] = [];
    trackCopies(client, copies);
    copiesOf.set(client, copies);
  }
  return client;
}

const copiesOf = new WeakMap<object, Cluster[]>();

function trackCopies(client: Cluster, copies: Cluster[]): void {
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (...args: Parameters<Cluster['duplicate']>) => {
    const copy = duplicate(...args);
    copies.push(copy);
    trackCopies(copy, copies);
    return copy;
  };
}

/**
 * Closes every connection a BullMQ Worker made of a consumer's cluster client (createCluster with
 * lazyConnect), once Worker.close() has returned. BullMQ 6.7 leaves two of them open, and either one
 * alone kept a closed worker's process alive (test/scale/redis-cluster.e2e-spec.ts, "a worker closed"):
 * - the client itself: the worker's main connection. BullMQ uses a client instance it is given as it
 *   is (Worker.createBackend asks for no `blocking` copy) and treats it as the caller's (`shared`), so
 *   its close() never quits it, and the client goes on refreshing the cluster's slots;
 * - its copies (`duplicate()`, tracked here): the blocking connection. Worker.close() disconnects it
 *   to end the waiting BZPOPMIN before it marks it closing, so BullMQ's cluster recovery
 *   (RedisConnection.runWithClusterRecovery) reconnects it; a copy may also be copied again.
 * disconnect() on a client that is already closed is harmless (BullMQ may have set its status to
 * `end` while ioredis still reconnects it, so the status is not trusted).
 */
export function disconnectConsumer(connection: unknown): void {
  if (!copiesOf.has(connection as object)) return;
  (connection as Cluster).disconnect();
  for (const copy of copiesOf.get(connection as object) ?? []) copy.disconnect();
}

/**
 * Waits (at most `ms`) for the first connection. Without an offline queue a command sent before it
 * fails at once: a one-shot process such as the admin CLI would fail its very first command. A
 * Redis that is down does not stop start-up; requests get 503 until it answers.
 */
async function firstConnection(client: RedisClient, ms: number): Promise<RedisClient> {
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
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
