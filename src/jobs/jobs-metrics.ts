// The API's scrape-time reads of what the jobs module owns: each region's queue and live workers, and
// the credit holds of open jobs (src/metrics/system-gauges.ts turns them into gauges).
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { registerSnapshotReader, unregisterSnapshotReader, type SystemSnapshot } from '../metrics/system-gauges';
import { JobQueue } from './job-queue';
import { JobsRepository } from './jobs.repository';
import { RegionHealth } from './region-health';

@Injectable()
export class JobsMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly reader = (): Promise<SystemSnapshot> => this.read();

  constructor(
    private readonly jobs: JobsRepository,
    private readonly queue: JobQueue,
    private readonly regions: RegionHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    registerSnapshotReader('jobs', this.reader);
  }

  onModuleDestroy(): void {
    unregisterSnapshotReader('jobs', this.reader);
  }

  private async read(): Promise<SystemSnapshot> {
    const [holds, known, waitingItems] = await Promise.all([
      this.jobs.openHolds(),
      this.queue.regions(),
      this.jobs.waitingItemsByPlan(),
    ]);
    const regions = [...new Set([...known, this.config.region])].sort();
    const queues = await Promise.all(
      regions.map(async (region) => {
        const [depth, workers] = await Promise.all([this.queue.depth(region), this.regions.liveWorkers(region)]);
        // Items wait in BullMQ's prioritized set (the fair share), where the oldest is not at either
        // end: the oldest job with an item still waiting comes from PostgreSQL.
        const oldestItem = Math.max(0, ...waitingItems.filter((w) => w.region === region).map((w) => w.oldestSeconds));
        return { region, ...depth, oldestWaitingSeconds: Math.max(depth.oldestWaitingSeconds, oldestItem), workers };
      }),
    );
    return { holds, queues, waitingItems: waitingItems.map(({ region, plan, items }) => ({ region, plan, items })) };
  }
}
