import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { BillingModule } from '../billing/billing.module';
import { AssetsController } from './assets.controller';
import { FfprobeSourceProbe } from './ffprobe-source-probe';
import { JobAdmission } from './job-admission';
import { JobLifecycleModule } from './job-lifecycle.module';
import { JobQueue } from './job-queue';
import { JobsMetrics } from './jobs-metrics';
import { AudioJobsController, Sdr2HdrJobsController } from './jobs.controller';
import { JobsRepository } from './jobs.repository';
import { JobsService } from './jobs.service';
import { SubmitLimits } from './limits';
import { PlaybackController } from './playback.controller';
import { ProbeSlots } from './probe-slots';
import { RegionHealth } from './region-health';
import { SOURCE_PROBE } from './source-probe';
import { SourcesService } from './sources.service';
import { UploadsController } from './uploads.controller';
import { UploadsRepository } from './uploads.repository';
import { UploadsService } from './uploads.service';
import { CancelJob } from './usecases/cancel-job/cancel-job.usecase';
import { EstimateJob } from './usecases/estimate-job/estimate-job.usecase';
import { PrepareJob } from './usecases/prepare-job';
import { SubmitJob } from './usecases/submit-job/submit-job.usecase';

@Module({
  imports: [AuthModule, BillingModule, JobLifecycleModule],
  controllers: [Sdr2HdrJobsController, AudioJobsController, UploadsController, AssetsController, PlaybackController],
  providers: [
    JobsService,
    PrepareJob,
    SubmitJob,
    EstimateJob,
    CancelJob,
    JobsRepository,
    SubmitLimits,
    JobAdmission,
    JobQueue,
    JobsMetrics,
    RegionHealth,
    SourcesService,
    ProbeSlots,
    UploadsService,
    UploadsRepository,
    { provide: SOURCE_PROBE, useClass: FfprobeSourceProbe },
  ],
})
export class JobsModule {}
