import { Module } from '@nestjs/common';
import { JobLifecycleModule } from '../jobs/job-lifecycle.module';
import { FfmpegMediaRunner } from './ffmpeg-media-runner';
import { ItemEnding } from './item-ending';
import { ItemInput } from './item-input';
import { MEDIA_RUNNER } from './media-runner';
import { OUTAGE_POLICIES, WORKER_OUTAGE_POLICIES } from './outage-retry';
import { MediaWorker } from './media-worker';
import { ProcessingRepository } from './processing.repository';
import { ProgressWriter } from './progress-writer';
import { SegmentFiles } from './segment-files';
import { SegmentsRepository } from './segments.repository';
import { StorageSweeper } from './storage-sweeper';
import { CancelListener } from './upkeep/cancel-listener';
import { Reconciler } from './upkeep/reconciler';
import { RetentionPurge } from './upkeep/retention-purge';
import { WorkerHeartbeat } from './upkeep/worker-heartbeat';
import { EncodeSegment } from './usecases/encode-segment/encode-segment.usecase';
import { JoinItem } from './usecases/join-item/join-item.usecase';
import { RunItem } from './usecases/run-item/run-item.usecase';
import { SplitItem } from './usecases/split-item/split-item.usecase';
import { WorkDirs } from './work-dirs';

/** Loaded only by the worker process: the API never runs media pipelines. */
@Module({
  imports: [JobLifecycleModule],
  providers: [
    ProcessingRepository,
    SegmentsRepository,
    RunItem,
    SplitItem,
    EncodeSegment,
    JoinItem,
    ItemEnding,
    ItemInput,
    ProgressWriter,
    SegmentFiles,
    MediaWorker,
    WorkerHeartbeat,
    CancelListener,
    Reconciler,
    RetentionPurge,
    StorageSweeper,
    WorkDirs,
    { provide: MEDIA_RUNNER, useClass: FfmpegMediaRunner },
    { provide: OUTAGE_POLICIES, useValue: WORKER_OUTAGE_POLICIES },
  ],
})
export class ProcessingModule {}
