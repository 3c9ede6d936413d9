// BullMQ's Redis connections and how a BullMQ queue is closed: the BullMQ driver's plumbing, apart
// from the driver itself. Tests that look into a queue with BullMQ's own classes take their
// connection here too.
import type { ConnectionOptions, RedisOptions as BullRedisOptions } from 'bullmq';
import type { AppConfig } from '../../common/config/config';
import { createCluster, redisOptions } from '../../common/redis/redis.module';

/**
 * BullMQ's connection (from the one factory, common/redis): fail fast in the API; workers block on
 * Redis, so no per-request cap. On a cluster BullMQ takes a Cluster client (it builds plain clients
 * only from options): a producer's is used as it is and dropped by closeQueue; a consumer's is the
 * worker's main connection and is duplicated for its blocking one, and BullMQ closes neither for
 * good, so BullMqDriver.stopWorker closes them (disconnectConsumer). The queue keys share the
 * prefix's hash tag (`{mj}:media.local:…`), as BullMQ requires of a queue on a cluster.
 */
export function bullConnection(config: AppConfig, role: 'producer' | 'worker'): ConnectionOptions {
  const redisRole = role === 'producer' ? 'producer' : 'blocking';
  if (config.redisTopology.kind === 'cluster') {
    return createCluster(config, `bull-${role}`, redisRole, role === 'worker');
  }
  const options: BullRedisOptions = redisOptions(config, redisRole);
  return options;
}

/** A raw Redis client as BullMQ's Redis backend hands it out. */
interface RawClient {
  status: string;
  disconnect(): void;
}

/** What `closeQueue` needs of a BullMQ Queue (its Redis backend's clients). */
interface ClosableQueue {
  close(): Promise<void>;
  readonly backend: { readonly client: Promise<RawClient> };
}

/** How long closing a queue may wait for Redis before its clients are dropped. */
const CLOSE_GRACE_MS = 2000;

/**
 * Closes a BullMQ queue, also while Redis is unreachable. There BullMQ's close() never
 * returns (it waits for a connection that cannot come back), or returns with the QUIT it could not
 * send swallowed; either way its clients stay, reconnecting for ever — knocking on Redis after
 * shutdown and keeping the process alive. So: close, wait at most CLOSE_GRACE_MS, then drop the client
 * if it is not closed (nothing to drop when QUIT went through: its status is then 'end'). Not for a
 * Worker: its close() waits for running jobs to finish, which no grace period may cut short.
 */
export async function closeQueue(target: ClosableQueue): Promise<void> {
  const grace = <T>(promise: Promise<T>): Promise<T | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), CLOSE_GRACE_MS)));
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  };
  // A close that fails (its QUIT refused by a Redis that went away) leaves clients to drop below.
  await grace(target.close().catch(() => undefined));
  // A client that never connected has nothing to drop: its rejection is the outage itself.
  const client = await grace(target.backend.client.catch(() => undefined));
  if (client && client.status !== 'end') client.disconnect();
}
