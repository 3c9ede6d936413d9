// POST /v1/{api}/jobs: the submit, in the order of docs/api-decisions.md §2. Steps up to 7 are the
// preparation it shares with the estimate (prepare-job.ts); step 8, limits and money with the job's
// insert, is one transaction (job-admission.ts); then the job is enqueued.
import { Injectable, Logger } from '@nestjs/common';
import type { AuthContext } from '../../../auth/auth-context';
import { newId } from '../../../common/ids';
import { JobAdmission } from '../../job-admission';
import { JobQueue } from '../../job-queue';
import type { JobView } from '../../job-view';
import { PrepareJob } from '../prepare-job';
import { storedItem, type SubmitRequest } from '../submit-request';

@Injectable()
export class SubmitJob {
  private readonly logger = new Logger(SubmitJob.name);

  constructor(
    private readonly prepare: PrepareJob,
    private readonly admission: JobAdmission,
    private readonly queue: JobQueue,
  ) {}

  async execute(caller: AuthContext, request: SubmitRequest): Promise<JobView> {
    const { job, spec, items, region, metadata } = await this.prepare.execute(caller, request, 'submit');
    const stored = items.map(storedItem);
    // Step 8 and the job itself, in one transaction (job-admission.ts).
    const view = await this.admission.admit({
      caller,
      job: {
        id: newId('job'),
        accountId: caller.accountId,
        api: job.api,
        region,
        outputOptions: job.output,
        outputSpec: spec,
        metadata,
        estimatedCredits: stored.reduce((sum, item) => sum + item.estimatedCredits, 0),
        estimatedSeconds: stored.reduce((sum, item) => sum + item.durationSeconds, 0),
        requestId: request.requestId,
        items: stored,
      },
      idempotency: request.idempotency,
    });
    // After commit: if Redis is down now, a worker's reconciler enqueues the job later.
    await this.queue.enqueue(view.job_id, region).catch((error: unknown) => {
      this.logger.warn({ job_id: view.job_id, err: error }, 'enqueue failed; the reconciler will enqueue the job');
    });
    return view;
  }
}
