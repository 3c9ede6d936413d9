// The job reads of the API: one job, and an account's jobs of one API (newest first). The writes are
// use cases (src/jobs/usecases/: submit-job, estimate-job, cancel-job).
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { toList, type ListResponse } from '../common/pagination';
import { toJobView, viewLinks, type JobView } from './job-view';
import type { JobApi } from './job.types';
import { JobsRepository } from './jobs.repository';

@Injectable()
export class JobsService {
  constructor(
    private readonly jobs: JobsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(accountId: string, jobId: string, api?: JobApi): Promise<JobView> {
    const found = await this.jobs.findForAccount(accountId, jobId, this.config.jobRetentionDays);
    if (!found || (api && found.job.api !== api)) throw new ApiError('job_not_found', { param: 'job_id' });
    return toJobView(found.job, found.items, viewLinks(this.config));
  }

  async list(
    accountId: string,
    api: JobApi,
    query: { limit?: number; starting_after?: string; status?: string },
  ): Promise<ListResponse<JobView>> {
    const limit = query.limit ?? 20;
    const found = await this.jobs.list(accountId, api, {
      limit: limit + 1,
      startingAfter: query.starting_after,
      status: query.status,
      retentionDays: this.config.jobRetentionDays,
    });
    const links = viewLinks(this.config);
    return toList(
      found.map(({ job, items }) => toJobView(job, items, links)),
      limit,
      (view) => view.job_id,
    );
  }
}
