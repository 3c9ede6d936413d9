import { Injectable, Logger } from '@nestjs/common';
import { JobLifecycle } from '../jobs/job-lifecycle';
import type { ItemPhase } from '../jobs/job.types';
import { SegmentsRepository } from './segments.repository';

/**
 * Writes the progress a MediaRunner reports (already throttled to once a second by the media layer's
 * ProgressThrottle) and notices a cancel this worker missed: `abort` is called once the job is no
 * longer processing. A failed write is logged and forgotten: the next one carries the same news.
 */
@Injectable()
export class ProgressWriter {
  private readonly logger = new Logger(ProgressWriter.name);

  constructor(
    private readonly lifecycle: JobLifecycle,
    private readonly segments: SegmentsRepository,
  ) {}

  forItem(jobId: string, index: number, abort: () => void): (fraction: number) => void {
    return (fraction) =>
      this.write(this.lifecycle.reportProgress(jobId, index, clamp(fraction)), abort, { job_id: jobId, item: index });
  }

  /** A segment's progress makes its item's (the sum of its segments', below 1 until the join) and the job's. */
  forSegment(jobId: string, index: number, segment: number, abort: () => void): (fraction: number) => void {
    return (fraction) =>
      this.write(
        this.segments
          .progress(jobId, index, segment, clamp(fraction))
          .then((item) => this.lifecycle.reportProgress(jobId, index, clamp(Math.min(0.999, item)))),
        abort,
        { job_id: jobId, item: index, segment },
      );
  }

  /** Marks what an item does now (items[i].phase); a failed write is logged and forgotten, as progress is. */
  phase(jobId: string, index: number, phase: ItemPhase): void {
    this.lifecycle
      .reportPhase(jobId, index, phase)
      .catch((error: unknown) =>
        this.logger.warn({ job_id: jobId, item: index, phase, err: error }, 'phase write failed'),
      );
  }

  private write(written: Promise<boolean>, abort: () => void, ids: Record<string, unknown>): void {
    written.then(
      (processing) => {
        if (!processing) abort();
      },
      (error: unknown) => this.logger.warn({ ...ids, err: error }, 'progress write failed'),
    );
  }
}

function clamp(fraction: number): number {
  return Math.round(Math.max(0, Math.min(1, fraction)) * 1000) / 1000;
}
