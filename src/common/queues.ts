// The catalogue of queues and the job names on them. The worker checks at boot that every job
// name has a handler, so a name added here without one stops start-up with a clear message.
import type { AppConfig } from './config/config';

export const QUEUE_JOBS = {
  media: ['process-job'],
  webhooks: ['deliver'],
} as const;

export type QueueKind = keyof typeof QUEUE_JOBS;

/** Media jobs run only on workers of their region, so each region has its own queue. */
export function mediaQueueName(region: string): string {
  return `media.${region}`;
}

export interface MediaJobData {
  jobId: string;
}

/**
 * How every media job is added, by the API and by the reconciler: the BullMQ id is the job id (a
 * second add of a waiting job is a no-op), infrastructure failures are retried twice with backoff.
 */
export function mediaJobOptions(jobId: string) {
  return {
    jobId,
    attempts: 3,
    backoff: { type: 'exponential', delay: 2000 },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  };
}

/** Webhook deliveries are not tied to a region: any worker may send them. */
export const WEBHOOK_QUEUE = 'webhooks';

export interface WebhookJobData {
  deliveryId: string;
}

export function cancelChannel(config: AppConfig): string {
  return `${config.redisPrefix}:cancel`;
}

export function workersKey(config: AppConfig, region: string): string {
  return `${config.redisPrefix}:workers:${region}`;
}

/** BullMQ connection options: fail fast in the API; workers block on Redis, so no per-request cap. */
export function bullConnection(config: AppConfig, role: 'producer' | 'worker') {
  const url = new URL(config.redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username || undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    ...(role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 }
      : // Reconnect within 2 s of Redis coming back (BullMQ's default backs off to 20 s).
        { maxRetriesPerRequest: null, retryStrategy: (times: number) => Math.min(times * 200, 2000) }),
  };
}
