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
