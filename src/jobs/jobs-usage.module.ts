import { Global, Injectable, Module } from '@nestjs/common';
import { PROCESSING_USAGE, type ProcessingUsage } from '../billing/processing-usage';
import { JobsRepository } from './jobs.repository';

/** Processing minutes as the quota counts them (docs/api-decisions.md §4): finished jobs' time, open jobs' estimates. */
@Injectable()
class JobsProcessingUsage implements ProcessingUsage {
  constructor(private readonly jobs: JobsRepository) {}

  async minutesUsedSince(accountId: string, since: Date): Promise<number> {
    return Math.ceil((await this.jobs.secondsUsedSince(accountId, since)) / 60);
  }
}

/**
 * Provides billing's PROCESSING_USAGE to every process that shows credit balances (the API and the
 * admin command line). Global because billing cannot import the jobs module that counts usage.
 */
@Global()
@Module({
  providers: [JobsRepository, { provide: PROCESSING_USAGE, useClass: JobsProcessingUsage }],
  exports: [PROCESSING_USAGE],
})
export class JobsUsageModule {}
