import type { JobLifecycle } from '../../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../../jobs/job.types';

/**
 * A processing job and one of its items, for work on the item after its take (a segment, the join):
 * processing → processing marks the job's heartbeat and reads its row. Null when the job ended.
 */
export async function openItem(
  lifecycle: JobLifecycle,
  jobId: string,
  index: number,
): Promise<{ job: JobRow; item: JobItemRow } | null> {
  const claimed = await lifecycle.claim(jobId);
  const item = claimed?.items.find((candidate) => candidate.index === index);
  return claimed && item ? { job: claimed.job, item } : null;
}
