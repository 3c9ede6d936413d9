import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { QueueOwner } from '../queues/queue-owner';
import type { MediaJobData } from '../queues/catalogue';
import { enqueueMediaJob } from '../queues/enqueue';
import { cancelChannel, regionsKey } from '../queues/keys';
import { REDIS, type RedisClient } from '../common/redis/redis.module';

/** The producer side of the media queues (API process): enqueue and cancel signals, never processing. */
@Injectable()
export class JobQueue {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly queues: QueueOwner,
  ) {}

  /** Idempotent: the BullMQ job id is the job id, so a second add of a waiting job is a no-op. */
  async enqueue(jobId: string, region: string): Promise<void> {
    await enqueueMediaJob(this.queues.sink('media', 'producer', region), jobId);
  }

  /**
   * For the metrics: the region queue's depth by state — waiting counts both BullMQ lists, the plain one
   * (fan-outs, units a lost worker left) and the prioritized one (items and segments: the fair share) —
   * and the age of the oldest unit in the plain list.
   */
  async depth(
    region: string,
  ): Promise<{ waiting: number; active: number; delayed: number; failed: number; oldestWaitingSeconds: number }> {
    const queue = this.queue(region);
    const [counts, oldest] = await Promise.all([
      queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'),
      queue.getJobs(['waiting'], 0, 0, true),
    ]);
    const since = oldest[0]?.timestamp;
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      oldestWaitingSeconds: since ? Math.max(0, (Date.now() - since) / 1000) : 0,
    };
  }

  /** Every region that ever had a worker (workers announce their region with each heartbeat). */
  regions(): Promise<string[]> {
    return this.redis.smembers(regionsKey(this.config));
  }

  /** Tells every worker to stop the job's media process now. */
  async signalCancel(jobId: string): Promise<void> {
    await this.redis.publish(cancelChannel(this.config), jobId);
  }

  /** The region's media queue, producer side (QueueOwner creates it once and closes it at shutdown). */
  private queue(region: string): Queue<MediaJobData> {
    return this.queues.queue('media', 'producer', region);
  }
}
