// POST /v1/{api}/jobs/{id}/cancel: the job ended through its lifecycle (which releases the hold and
// charges the items already delivered), then the worker running it told to stop its media process.
import { Injectable, Logger } from '@nestjs/common';
import { JobLifecycle } from '../../job-lifecycle';
import { JobQueue } from '../../job-queue';
import type { JobView } from '../../job-view';
import type { JobApi } from '../../job.types';
import { JobsService } from '../../jobs.service';

@Injectable()
export class CancelJob {
  private readonly logger = new Logger(CancelJob.name);

  constructor(
    private readonly jobs: JobsService,
    private readonly lifecycle: JobLifecycle,
    private readonly queue: JobQueue,
  ) {}

  async execute(accountId: string, api: JobApi, jobId: string): Promise<JobView> {
    // Another account's job, or one of the other API, is not found (404), never cancelled.
    await this.jobs.get(accountId, jobId, api);
    await this.lifecycle.cancel(jobId);
    await this.queue.signalCancel(jobId).catch((error: unknown) => {
      // The job has ended and its hold is released; the worker finds it ended at its next progress mark.
      this.logger.warn({ job_id: jobId, err: error }, 'cancel signal not sent; the worker stops at its next check');
    });
    return this.jobs.get(accountId, jobId, api);
  }
}
