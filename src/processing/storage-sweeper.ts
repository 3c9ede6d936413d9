// Removes what nothing points at any more: outputs a worker stored before it died (the job then ended
// without them), segment parts an item left behind (a worker died before removing them), objects whose
// rows retention deleted while the store was down, and unfinished multipart uploads (or partial files)
// of processes that died mid-write. Only objects older than
// STORAGE_SWEEP_AFTER_SECONDS are considered, so a write in progress is never touched. Objects are
// judged UPKEEP_BATCH_SIZE at a time (one indexed query per batch: assets_live_key_idx,
// uploads_live_key_idx, the jobs' primary key), paced like every upkeep (src/common/upkeep-batches.ts).
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { PeriodicTask } from '../common/periodic';
import { BatchPacer, batchPlan } from '../common/upkeep-batches';
import {
  jobOfOutputKey,
  jobOfSegmentKey,
  packageOfKey,
  OUTPUTS_PREFIX,
  SEGMENTS_PREFIX,
  STORAGE,
  type Storage,
} from '../common/storage/storage';
import { ProcessingRepository } from './processing.repository';

/** Each swept prefix with the job its keys belong to: an object of a job that is still open is kept. */
const SWEPT_PREFIXES: { prefix: string; jobOf: (key: string) => string | null }[] = [
  { prefix: 'uploads/', jobOf: () => null },
  { prefix: OUTPUTS_PREFIX, jobOf: jobOfOutputKey },
  { prefix: SEGMENTS_PREFIX, jobOf: jobOfSegmentKey },
];

export interface SweepResult {
  abortedWrites: number;
  removedObjects: number;
}

@Injectable()
export class StorageSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(StorageSweeper.name);
  private readonly task = new PeriodicTask('storage sweep', this.logger, () => this.sweep());

  constructor(
    private readonly repository: ProcessingRepository,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.task.start(this.intervalMs);
  }

  beforeApplicationShutdown(): void {
    this.task.stop();
  }

  /** How often a worker sweeps: the grace period, at most hourly. */
  get intervalMs(): number {
    return Math.min(3600_000, this.config.storageSweepAfterSeconds * 1000);
  }

  async sweep(now = Date.now()): Promise<SweepResult> {
    const before = new Date(now - this.config.storageSweepAfterSeconds * 1000);
    const abortedWrites = await this.storage.abortUnfinished(before);
    const plan = batchPlan(this.config, () => this.task.stopped);
    const pacer = new BatchPacer(plan);
    let removedObjects = 0;
    for (const { prefix, jobOf } of SWEPT_PREFIXES) {
      let batch: { key: string; jobId: string | null }[] = [];
      for await (const entry of this.storage.list(prefix)) {
        if (entry.lastModified >= before) continue;
        batch.push({ key: entry.key, jobId: jobOf(entry.key) });
        if (batch.length >= plan.size) {
          removedObjects += await this.removeUnused(batch);
          batch = [];
          // Stopped (shutting down): the rest waits for the next sweep.
          if (!(await pacer.next())) break;
        }
      }
      removedObjects += await this.removeUnused(batch);
      if (plan.stopped?.()) break;
    }
    if (abortedWrites + removedObjects > 0)
      this.logger.log({ aborted_writes: abortedWrites, removed_objects: removedObjects }, 'storage sweep');
    return { abortedWrites, removedObjects };
  }

  private async removeUnused(batch: { key: string; jobId: string | null }[]): Promise<number> {
    // An object of a package is in use while its package is: the asset's key is the package's prefix.
    const owned = batch.map((object) => ({ ...object, owner: packageOfKey(object.key) ?? object.key }));
    const used = await this.repository.objectsInUse(owned.map(({ owner, jobId }) => ({ key: owner, jobId })));
    const unused = owned.filter((object) => !used.has(object.owner)).map((object) => object.key);
    await this.storage.removeMany(unused);
    return unused.length;
  }
}
