import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { BillingModule } from '../billing/billing.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { AssetsController } from './assets.controller';
import { FfprobeSourceProbe } from './ffprobe-source-probe';
import { JobQueue } from './job-queue';
import { AudioJobsController, Sdr2HdrJobsController } from './jobs.controller';
import { JobsRepository } from './jobs.repository';
import { JobsService } from './jobs.service';
import { RegionHealth } from './region-health';
import { SOURCE_PROBE } from './source-probe';
import { SourcesService } from './sources.service';
import { UploadsController } from './uploads.controller';
import { UploadsRepository } from './uploads.repository';
import { UploadsService } from './uploads.service';

@Module({
  imports: [AuthModule, BillingModule, WebhooksModule],
  controllers: [Sdr2HdrJobsController, AudioJobsController, UploadsController, AssetsController],
  providers: [
    JobsService,
    JobsRepository,
    JobQueue,
    RegionHealth,
    SourcesService,
    UploadsService,
    UploadsRepository,
    { provide: SOURCE_PROBE, useClass: FfprobeSourceProbe },
  ],
})
export class JobsModule {}
