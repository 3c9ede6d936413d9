// Retention: every hour, assets and uploads past their expiry go (rows marked deleted, stored objects
// removed), then jobs finished more than JOB_RETENTION_DAYS ago (with their items, segments and assets)
// and expired idempotency keys — each in batches of UPKEEP_BATCH_SIZE, one short transaction per
// batch, paced (src/common/upkeep-batches.ts), so a backlog of millions never holds a long lock.
// Deleting a job leaves account_usage_days as it is (src/billing/usage-days.ts): a month's processing
// minutes keep the jobs purged during it, whatever JOB_RETENTION_DAYS (1 to 3650) is.
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../common/config/config';
import { PeriodicTask } from '../../common/periodic';
import { removeStoredOutputs, STORAGE, type Storage } from '../../common/storage/storage';
import { batchPlan, inBatches, type BatchRun } from '../../common/upkeep-batches';
import { ProcessingRepository } from '../processing.repository';

const PURGE_MS = 3600_000;

export interface PurgeResult {
  assets: BatchRun;
  uploads: BatchRun;
  jobs: BatchRun;
  idempotencyKeys: BatchRun;
}

@Injectable()
export class RetentionPurge implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RetentionPurge.name);
  private readonly task = new PeriodicTask('retention purge', this.logger, () => this.purge());

  constructor(
    private readonly repository: ProcessingRepository,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.task.start(PURGE_MS);
  }

  beforeApplicationShutdown(): void {
    this.task.stop();
  }

  /** One whole purge, batch by batch; a shutdown stops it between batches (the next run goes on). */
  async purge(): Promise<PurgeResult> {
    const plan = batchPlan(this.config, () => this.task.stopped);
    // A batch's objects are removed once its rows say deleted; objects a failed removal leaves are
    // the storage sweeper's (src/processing/storage-sweeper.ts).
    const removing = (expire: (limit: number) => Promise<string[]>) => async (limit: number) => {
      const keys = await expire(limit);
      await removeStoredOutputs(this.storage, keys);
      return keys.length;
    };
    const result: PurgeResult = {
      assets: await inBatches(
        plan,
        removing((limit) => this.repository.expireAssets(limit)),
      ),
      uploads: await inBatches(
        plan,
        removing((limit) => this.repository.expireUploads(limit)),
      ),
      jobs: await inBatches(plan, (limit) => this.repository.deleteExpiredJobs(this.config.jobRetentionDays, limit)),
      idempotencyKeys: await inBatches(plan, (limit) => this.repository.deleteExpiredIdempotencyKeys(limit)),
    };
    const removed = Object.values(result).reduce((sum: number, run: BatchRun) => sum + run.done, 0);
    if (removed > 0)
      this.logger.log(
        {
          assets: result.assets.done,
          uploads: result.uploads.done,
          jobs: result.jobs.done,
          idempotency_keys: result.idempotencyKeys.done,
          batches: Object.values(result).reduce((sum: number, run: BatchRun) => sum + run.batches, 0),
        },
        'retention purge',
      );
    return result;
  }
}
