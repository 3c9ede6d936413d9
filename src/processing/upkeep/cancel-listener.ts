// Cancels reach the worker as a Redis message naming the job: every item or segment of it running
// here is aborted at once (its media process killed). A message lost while the subscription was
// down is caught at the item's next progress mark, which reads the job's status.
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../common/config/config';
import { cancelChannel } from '../../queues/keys';
import { createRedis, type RedisClient } from '../../common/redis/redis.module';
import { jobsRunning } from '../../metrics/job-metrics';

@Injectable()
export class CancelListener implements OnApplicationBootstrap, OnApplicationShutdown {
  /** The work running here, by job id: a cancel aborts all of it. */
  private readonly running = new Map<string, Set<AbortController>>();
  private subscriber?: RedisClient;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscriber = createRedis(this.config, 'cancels', 'blocking');
    this.subscriber.on('message', (_channel, jobId: string) => {
      for (const controller of this.running.get(jobId) ?? []) controller.abort();
    });
    await this.subscriber.subscribe(cancelChannel(this.config));
  }

  /** After the consumer has drained (MediaWorker stops it before this hook): no work is left to cancel. */
  onApplicationShutdown(): void {
    this.subscriber?.disconnect();
  }

  /** Runs work of a job with an AbortController that a cancel of the job aborts. */
  async whileRunning<T>(jobId: string, work: (controller: AbortController) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const controllers = this.running.get(jobId) ?? new Set<AbortController>();
    controllers.add(controller);
    this.running.set(jobId, controllers);
    jobsRunning.inc();
    try {
      return await work(controller);
    } finally {
      controllers.delete(controller);
      if (controllers.size === 0) this.running.delete(jobId);
      jobsRunning.dec();
    }
  }
}
