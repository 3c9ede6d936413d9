import { Module } from '@nestjs/common';
import { HoldsRepository } from './holds.repository';

/**
 * The credit holds alone, for both processes: the worker ends jobs (JobLifecycleModule) without loading the
 * rest of billing; the API gets them through BillingModule too.
 */
@Module({ providers: [HoldsRepository], exports: [HoldsRepository] })
export class HoldsModule {}
