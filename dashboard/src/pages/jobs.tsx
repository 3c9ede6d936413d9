import { api, isRunning, JOB_STATUSES, type Job, type JobApi, type List } from '../api';
import { formatNumber, formatTime, STATUS_LABELS } from '../format';
import { Link, navigate, useLocation } from '../router';
import { EmptyState, ErrorNotice, Loading, PageTitle, Progress, StatusBadge, useLoad } from '../ui';

const PAGE_SIZE = 20;
const POLL_MS = 1500;

/** The account's jobs of one API, filtered by status, a page at a time; running ones update live. One API call. */
export function JobsPage() {
  const { search } = useLocation();
  const jobApi: JobApi = search.get('api') === 'audio' ? 'audio' : 'sdr2hdr';
  const status = search.get('status') ?? '';
  const after = search.get('starting_after') ?? '';
  const jobs = useLoad(
    `jobs:${jobApi}:${status}:${after}`,
    () =>
      api<List<Job>>('GET', `/v1/${jobApi}/jobs`, {
        query: { limit: PAGE_SIZE, status, starting_after: after },
      }),
    { pollMs: POLL_MS, keepPolling: (page) => page.data.some((job) => isRunning(job.status)) },
  );
  const go = (changes: Record<string, string>) => {
    const next = new URLSearchParams({ api: jobApi, status, starting_after: after, ...changes });
    for (const [name, value] of [...next.entries()]) if (!value) next.delete(name);
    navigate(`/jobs?${next.toString()}`);
  };

  return (
    <>
      <PageTitle>Jobs</PageTitle>
      <div className="toolbar">
        <div className="tabs" role="group" aria-label="API">
          {(['sdr2hdr', 'audio'] as const).map((name) => (
            <button
              key={name}
              type="button"
              aria-pressed={jobApi === name}
              onClick={() => go({ api: name, starting_after: '' })}
            >
              {name === 'sdr2hdr' ? 'SDR → HDR10' : 'Speech loudness'}
            </button>
          ))}
        </div>
        <div className="field inline">
          <label htmlFor="status-filter">Status</label>
          <select
            id="status-filter"
            value={status}
            onChange={(event) => go({ status: event.target.value, starting_after: '' })}
          >
            <option value="">Any</option>
            {JOB_STATUSES.map((value) => (
              <option key={value} value={value}>
                {STATUS_LABELS[value]}
              </option>
            ))}
          </select>
        </div>
        <Link to="/jobs/new" className="button primary">
          New job
        </Link>
      </div>
      {jobs.error ? <ErrorNotice error={jobs.error} /> : null}
      {!jobs.data ? (
        !jobs.error && <Loading what="jobs" />
      ) : jobs.data.data.length === 0 ? (
        <EmptyState
          title={status ? `No ${STATUS_LABELS[status]?.toLowerCase()} ${jobApi} jobs` : `No ${jobApi} jobs yet`}
        >
          {after ? (
            <button type="button" onClick={() => go({ starting_after: '' })}>
              Back to the first page
            </button>
          ) : (
            <>
              <Link to="/jobs/new">Start a job here</Link>, or submit one with an API key (
              <a href="/docs" target="_blank" rel="noreferrer">
                API reference
              </a>
              ).
            </>
          )}
        </EmptyState>
      ) : (
        <>
          <table className="stack">
            <caption className="visually-hidden">{jobApi} jobs</caption>
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Status</th>
                <th scope="col">Progress</th>
                <th scope="col">Inputs</th>
                <th scope="col">Credits (charged / estimated)</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {jobs.data.data.map((job) => (
                <tr key={job.job_id}>
                  <td data-label="Job">
                    <Link to={`/jobs/${job.api}/${job.job_id}`}>
                      <code className="id">{job.job_id}</code>
                    </Link>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={job.status} />
                    {job.error && <span className="hint"> {job.error.code}</span>}
                  </td>
                  <td data-label="Progress">
                    {isRunning(job.status) ? (
                      <Progress
                        label={`Progress of ${job.job_id}`}
                        value={Math.round(job.progress * 100)}
                        max={100}
                        text={`${Math.round(job.progress * 100)} %`}
                      />
                    ) : (
                      '—'
                    )}
                  </td>
                  <td data-label="Inputs">
                    <InputNames job={job} />
                  </td>
                  <td data-label="Credits">
                    {formatNumber(job.billing.charged_credits)} / {formatNumber(job.billing.estimated_credits)}
                  </td>
                  <td data-label="Created">{formatTime(job.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="pager">
            {after && (
              <button type="button" onClick={() => go({ starting_after: '' })}>
                First page
              </button>
            )}
            {jobs.data.has_more && jobs.data.next_cursor && (
              <button type="button" onClick={() => go({ starting_after: jobs.data!.next_cursor! })}>
                Next page
              </button>
            )}
          </div>
        </>
      )}
    </>
  );
}

/** The inputs by the names a person knows: uploaded files' names (or their upload ids), URLs' last path part. */
function InputNames({ job }: { job: Job }) {
  const names = job.items.map((item) =>
    item.source.type === 'url'
      ? decodeURIComponent(new URL(item.source.url).pathname.split('/').pop() || item.source.url)
      : (item.source.filename ?? item.source.upload_id),
  );
  const shown = names.slice(0, 2).join(', ');
  return <span className="filename">{names.length > 2 ? `${shown} and ${names.length - 2} more` : shown}</span>;
}
