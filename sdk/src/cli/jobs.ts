// jobs get|list|cancel: a job's summary, or a table of the account's jobs of one API.
import type { MediaJobs } from '../client.js';
import { JOB_STATUSES, type JobView } from '../types.js';
import { apiArg, choiceArg, numberArg, parse, UsageError } from './args.js';
import { formatBytes, formatDate, plural, summary, table } from './format.js';
import { printResult, type CliIo } from './io.js';
import { printList } from './account.js';
import { measuredSummary } from './measured.js';

const percent = (progress: number) => `${Math.floor(progress * 100)}%`;

export function jobSummary(job: JobView): string {
  const lines: [string, string][] = [
    ['Job', `${job.job_id} (${job.api})`],
    ['Status', job.status === 'processing' ? `processing, ${percent(job.progress)}` : job.status],
    ['Created', formatDate(job.created_at)],
    ['Finished', formatDate(job.finished_at)],
    [
      'Credits',
      `${plural(job.billing.charged_credits, 'credit')} charged of ${plural(job.billing.estimated_credits, 'credit')} estimated (${job.billing.state})`,
    ],
  ];
  if (job.error) lines.push(['Error', `${job.error.code}: ${job.error.message}`]);
  const items = job.items.map((item) => [
    String(item.index),
    item.status,
    item.source.type === 'url' ? item.source.url : (item.source.filename ?? item.source.upload_id),
    item.output ? `${item.output.container}, ${formatBytes(item.output.size_bytes)}` : (item.error?.code ?? ''),
  ]);
  return `${summary(lines)}\n${table(['ITEM', 'STATUS', 'SOURCE', 'OUTPUT'], items)}${measuredSummary(job.items)}`;
}

export function jobsTable(jobs: JobView[]): string {
  return table(
    ['JOB', 'STATUS', 'ITEMS', 'CREDITS', 'CREATED'],
    jobs.map((job) => [
      job.job_id,
      job.status === 'processing' ? `processing ${percent(job.progress)}` : job.status,
      String(job.items.length),
      String(job.billing.charged_credits || job.billing.estimated_credits),
      formatDate(job.created_at),
    ]),
  );
}

export async function jobs(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    limit: { type: 'string' },
    status: { type: 'string' },
    'starting-after': { type: 'string' },
    all: { type: 'boolean' },
  });
  const [action, apiName, jobId] = positionals;
  if (action !== 'get' && action !== 'list' && action !== 'cancel')
    throw new UsageError('jobs needs get, list or cancel');
  const resource = client[apiArg(apiName)].jobs;
  const needId = (): string => {
    if (!jobId) throw new UsageError(`jobs ${action} needs a job id`);
    return jobId;
  };
  if (action === 'list') {
    const list = resource.list({
      limit: numberArg('limit', values.limit),
      status: choiceArg('status', values.status, JOB_STATUSES),
      starting_after: values['starting-after'],
    });
    await printList(io, values, list, jobsTable);
  } else {
    const job = action === 'get' ? await resource.retrieve(needId()) : await resource.cancel(needId());
    printResult(io, values, job, jobSummary);
  }
  return 0;
}
