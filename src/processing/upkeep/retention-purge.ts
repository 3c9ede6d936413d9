// Retention: every hour, jobs older than JOB_RETENTION_DAYS go with their stored objects.
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../common/config/config';
import { PeriodicTask } from '../../common/periodic';
import { STORAGE, type Storage } from '../../common/storage/storage';
import { ProcessingRepository } from '../processing.repository';

const PURGE_MS = 3600_000;

@Injectable()
export class RetentionPurge implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task = new PeriodicTask('retention purge', new Logger(RetentionPurge.name), () => this.purge());

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

  async purge(): Promise<void> {
    const keys = await this.repository.purgeExpired(this.config.jobRetentionDays);
    await this.storage.removeMany(keys);
  }
}
