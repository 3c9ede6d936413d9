import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { bullConnection, cancelChannel, enqueueMediaJob, mediaQueueName, type MediaJobData } from '../common/queues';
import { REDIS } from '../common/redis/redis.module';

/** The producer side of the media queues (API process): enqueue and cancel signals, never processing. */
@Injectable()
export class JobQueue implements OnApplicationShutdown {
  private readonly queues = new Map<string, Queue<MediaJobData>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  /** Idempotent: the BullMQ job id is the job id, so a second add of a waiting job is a no-op. */
  async enqueue(jobId: string, region: string): Promise<void> {
    await enqueueMediaJob(this.queue(region), jobId);
  }

  /** Tells every worker to stop the job's media process now. */
  async signalCancel(jobId: string): Promise<void> {
    await this.redis.publish(cancelChannel(this.config), jobId);
  }

  private queue(region: string): Queue<MediaJobData> {
    let queue = this.queues.get(region);
    if (!queue) {
      queue = new Queue<MediaJobData>(mediaQueueName(region), {
        connection: bullConnection(this.config, 'producer'),
        prefix: this.config.redisPrefix,
      });
      // Connection errors fail the add or publish that meets them (a 503 or a logged warning); Node
      // needs a listener for the event itself.
      queue.on('error', () => undefined);
      this.queues.set(region, queue);
    }
    return queue;
  }

  async onApplicationShutdown(): Promise<void> {
    // Shutting down: a queue whose Redis is unreachable has nothing left to flush, and shutdown must go on.
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close()));
  }
}
