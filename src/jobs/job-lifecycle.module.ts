import { Module } from '@nestjs/common';
import { HoldsModule } from '../billing/holds.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { JobLifecycle } from './job-lifecycle';
import { JobLifecycleRepository } from './job-lifecycle.repository';

/**
 * The job lifecycle, for both processes: the API cancels jobs, workers take and end them. Its own
 * module so the worker gets it without the API's controllers, sources and queue producer.
 */
@Module({
  imports: [HoldsModule, WebhooksModule],
  providers: [JobLifecycle, JobLifecycleRepository],
  exports: [JobLifecycle],
})
export class JobLifecycleModule {}
