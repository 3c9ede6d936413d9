// The Redis key and channel names beside the queues. Every one starts with the configured prefix,
// which on a cluster is a hash tag (`{mj}`: common/config/redis-config.ts keyPrefix), so every key of
// a region — BullMQ's own and these — lives in one hash slot.
import type { AppConfig } from '../common/config/config';

/** Cancel signals (pub/sub, by job id) to every worker. */
export function cancelChannel(config: AppConfig): string {
  return `${config.redisPrefix}:cancel`;
}

/** Every region that ever had a worker (the metrics read each one's queue, even with no worker left). */
export function regionsKey(config: AppConfig): string {
  return `${config.redisPrefix}:regions`;
}

export function workersKey(config: AppConfig, region: string): string {
  return `${config.redisPrefix}:workers:${region}`;
}

/**
 * The fair share's virtual clock and each account's virtual finish time for a region's media queue
 * (fair-share.ts). Same prefix, so the same hash slot as the queue's own keys: the script that reads
 * BullMQ's prioritized set and writes these runs on one node.
 */
export function fairShareKeys(
  config: AppConfig,
  queueName: string,
): { clock: string; finish: string; prioritized: string } {
  return {
    clock: `${config.redisPrefix}:fair:${queueName}:clock`,
    finish: `${config.redisPrefix}:fair:${queueName}:finish`,
    // BullMQ's own sorted set of units waiting with a priority (`<prefix>:<queue>:prioritized`).
    prioritized: `${config.redisPrefix}:${queueName}:prioritized`,
  };
}
