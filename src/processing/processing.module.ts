import { Module } from '@nestjs/common';
import { JobLifecycleModule } from '../jobs/job-lifecycle.module';
import { FfmpegMediaRunner } from './ffmpeg-media-runner';
import { JobProcessor } from './job-processor';
import { MEDIA_RUNNER } from './media-runner';
import { MediaWorker } from './media-worker';
import { ProcessingRepository } from './processing.repository';
import { SegmentsRepository } from './segments.repository';
import { StorageSweeper } from './storage-sweeper';
import { WorkDirs } from './work-dirs';

/** Loaded only by the worker process: the API never runs media pipelines. */
@Module({
  imports: [JobLifecycleModule],
  providers: [
    ProcessingRepository,
    SegmentsRepository,
    JobProcessor,
    MediaWorker,
    StorageSweeper,
    WorkDirs,
    { provide: MEDIA_RUNNER, useClass: FfmpegMediaRunner },
  ],
  exports: [JobProcessor],
})
export class ProcessingModule {}
