import { useEffect, useState } from 'react';
import { api, ApiFailure, isRunning, type Job, type JobApi } from '../api';
import { formatBytes, formatCredits, formatNumber, formatSeconds, formatTime } from '../format';
import { ENDING_HEADINGS } from '../outcomes';
import { Link, navigate } from '../router';
import { useCanChange } from '../session';
import { MeasuredOutputs } from './job-checks';
import { LightMaps } from './light-map';
import { PackagePlayers } from './package-player';
import { ConfirmDialog, ErrorNotice, Loading, PageTitle, Progress, StatusBadge, useAction, useLoad } from '../ui';

const POLL_MS = 1000;

/**
 * A job known only by its id (a ledger row's link): read under sdr2hdr, else under audio (a job of the
 * other API is resource_missing there), then the page moves to the job's own address.
 */
export function JobLookup({ id }: { id: string }) {
  const found = useLoad(`job-lookup:${id}`, async () => {
    for (const jobApi of ['sdr2hdr', 'audio'] as const) {
      try {
        await api<Job>('GET', `/v1/${jobApi}/jobs/${encodeURIComponent(id)}`);
        return jobApi;
      } catch (error) {
        if (!(error instanceof ApiFailure && error.status === 404) || jobApi === 'audio') throw error;
      }
    }
    throw new Error('unreachable');
  });
  useEffect(() => {
    if (found.data) navigate(`/jobs/${found.data}/${id}`, { replace: true });
  }, [found.data, id]);
  return (
    <>
      <PageTitle>Job {id}</PageTitle>
      {found.error ? <ErrorNotice error={found.error} /> : <Loading what="the job" />}
    </>
  );
}

/** One job: live progress while it runs, its items, billing, error envelope and downloads. One API call. */
export function JobPage({ api: jobApi, id }: { api: JobApi; id: string }) {
  const canChange = useCanChange();
  const job = useLoad(`job:${jobApi}:${id}`, () => api<Job>('GET', `/v1/${jobApi}/jobs/${encodeURIComponent(id)}`), {
    pollMs: POLL_MS,
    keepPolling: (current) => isRunning(current.status),
  });
  const [confirming, setConfirming] = useState(false);
  const cancel = useAction(async () => {
    await api('POST', `/v1/${jobApi}/jobs/${encodeURIComponent(id)}/cancel`);
    setConfirming(false);
    job.reload();
  });

  return (
    <>
      <PageTitle>Job {id}</PageTitle>
      <p>
        <Link to={`/jobs?api=${jobApi}`}>← All {jobApi} jobs</Link>
      </p>
      {job.error ? <ErrorNotice error={job.error} /> : null}
      {!job.data ? (
        !job.error && <Loading what="the job" />
      ) : (
        <JobDetails
          job={job.data}
          canCancel={canChange && isRunning(job.data.status)}
          onCancel={() => setConfirming(true)}
        />
      )}
      {cancel.error ? <ErrorNotice error={cancel.error} title="Could not cancel" /> : null}
      <ConfirmDialog
        open={confirming}
        title="Cancel this job?"
        confirmLabel="Cancel job"
        dismissLabel="Keep job"
        danger
        busy={cancel.busy}
        onConfirm={() => void cancel.run()}
        onCancel={() => setConfirming(false)}
      >
        <p>
          The job stops within seconds. Inputs it has not finished are not charged: their held credits are released.
          Inputs it already finished were delivered and stay charged.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** "1920×1080 → 1280×720": the source's picture and the one produced (audio: none). */
function picture(item: Job['items'][number]): string {
  if (!item.width || !item.height) return '—';
  const source = `${item.width}×${item.height}`;
  return item.output_width && item.output_height ? `${source} → ${item.output_width}×${item.output_height}` : source;
}

function JobDetails({ job, canCancel, onCancel }: { job: Job; canCancel: boolean; onCancel: () => void }) {
  const percentDone = Math.round(job.progress * 100);
  return (
    <>
      <section className="card" aria-labelledby="status-heading">
        <h2 id="status-heading">
          Status: <StatusBadge status={job.status} />
        </h2>
        <Progress label="Job progress" value={percentDone} max={100} text={`${percentDone} %`} />
        <dl className="facts">
          <dt>API</dt>
          <dd>{job.api}</dd>
          <dt>Created</dt>
          <dd>{formatTime(job.created_at)}</dd>
          <dt>Started</dt>
          <dd>{formatTime(job.started_at)}</dd>
          <dt>Finished</dt>
          <dd>{formatTime(job.finished_at)}</dd>
        </dl>
        {canCancel && (
          <button type="button" className="danger" onClick={onCancel}>
            Cancel job
          </button>
        )}
      </section>

      {job.error && (
        <section aria-labelledby="error-heading">
          <h2 id="error-heading">{ENDING_HEADINGS[job.status] ?? 'Error'}</h2>
          <ErrorNotice error={job.error} />
          {job.error.details && (
            <details>
              <summary>Details of the error</summary>
              <pre>{JSON.stringify(job.error.details, null, 2)}</pre>
            </details>
          )}
        </section>
      )}

      <section className="card" aria-labelledby="billing-heading">
        <h2 id="billing-heading">Billing</h2>
        <dl className="facts">
          <dt>Estimated</dt>
          <dd>{formatCredits(job.billing.estimated_credits)} (held at submit)</dd>
          <dt>Charged</dt>
          <dd>{formatCredits(job.billing.charged_credits)}</dd>
          <dt>State</dt>
          <dd>
            {job.billing.state === 'authorised' && 'Credits held until the job ends'}
            {job.billing.state === 'settled' &&
              (job.status === 'cancelled'
                ? 'Settled: charged for the outputs delivered before the cancel'
                : 'Settled: charged for what was processed')}
            {job.billing.state === 'released' && 'Released: nothing charged'}
          </dd>
          <dt>Refunded</dt>
          <dd>{job.billing.refunded ? 'Yes' : 'No'}</dd>
        </dl>
      </section>

      <section aria-labelledby="items-heading">
        <h2 id="items-heading">Inputs and outputs</h2>
        <table className="stack">
          <caption className="visually-hidden">Items of the job</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Status</th>
              <th scope="col">Source</th>
              <th scope="col">Duration</th>
              <th scope="col">Picture (source → output)</th>
              <th scope="col">Credits (charged / estimated)</th>
              <th scope="col">Output</th>
            </tr>
          </thead>
          <tbody>
            {job.items.map((item) => (
              <tr key={item.index}>
                <td data-label="#">{item.index}</td>
                <td data-label="Status">
                  <StatusBadge status={item.status} />
                  {item.error && (
                    <>
                      {' '}
                      <a href={item.error.doc_url} target="_blank" rel="noreferrer">
                        <code>{item.error.code}</code>
                      </a>
                    </>
                  )}
                </td>
                <td data-label="Source">
                  <SourceName source={item.source} />
                </td>
                <td data-label="Duration">
                  {formatSeconds(item.duration_seconds)}
                  {item.decoded_duration_seconds !== null &&
                    Math.abs(item.decoded_duration_seconds - item.duration_seconds) > 0.1 && (
                      <div className="hint">decoded {formatSeconds(item.decoded_duration_seconds)}</div>
                    )}
                  {item.warnings.map((warning) => (
                    <div key={warning.code} className="hint" role="note" data-warning={warning.code}>
                      ⚠ {warning.message}
                    </div>
                  ))}
                </td>
                <td data-label="Picture">{picture(item)}</td>
                <td data-label="Credits">
                  {formatNumber(item.charged_credits)} / {formatNumber(item.estimated_credits)}
                </td>
                <td data-label="Output">
                  {item.output ? (
                    <>
                      {item.output.playlist_url ? (
                        <a href={item.output.playlist_url}>
                          HLS package ({formatBytes(item.output.size_bytes)}, {item.output.renditions?.length ?? 0}{' '}
                          renditions)
                        </a>
                      ) : (
                        <a href={item.output.url} download>
                          Download {item.output.container.toUpperCase()} ({formatBytes(item.output.size_bytes)})
                        </a>
                      )}
                      {item.output.video && <div className="hint">{describeLight(item.output.video)}</div>}
                    </>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {job.items.some((item) => item.output) && (
          <p className="hint">Download links are signed and work for an hour; reload the page for fresh ones.</p>
        )}
      </section>

      <PackagePlayers items={job.items} />

      <LightMaps
        items={job.items}
        describe={(item) => (item.output?.video ? describeLight(item.output.video) : null)}
      />

      <MeasuredOutputs items={job.items} />

      {Object.keys(job.metadata).length > 0 && (
        <section aria-labelledby="metadata-heading">
          <h2 id="metadata-heading">Metadata</h2>
          <dl className="facts">
            {Object.entries(job.metadata).map(([name, value]) => (
              <div key={name}>
                <dt>{name}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </section>
      )}
    </>
  );
}

type VideoOutput = NonNullable<NonNullable<Job['items'][number]['output']>['video']>;

/** One line on what was made: HDR10 or HLG, the mapping, and the measured light (MaxCLL / MaxFALL). */
function describeLight(video: VideoOutput): string {
  const light = video.light;
  const parts: string[] = [video.hdr];
  if (light) parts.push(light.mapping === 'expand' ? 'expanded highlights' : 'BT.2408 reference white');
  if (typeof light?.max_cll === 'number' && typeof light.max_fall === 'number') {
    parts.push(`MaxCLL ${light.max_cll} cd/m², MaxFALL ${light.max_fall} cd/m² (measured)`);
  }
  if (typeof light?.mastering_peak_nits === 'number') parts.push(`mastered for ${light.mastering_peak_nits} cd/m²`);
  return parts.join(' · ');
}

/** An item's source: its URL, or the uploaded file's name (the upload id beside it, for support); the id alone for an upload made without a name. */
export function SourceName({ source }: { source: Job['items'][number]['source'] }) {
  if (source.type === 'url') return <code>{source.url}</code>;
  if (!source.filename) return <code className="id">{source.upload_id}</code>;
  return (
    <>
      <span className="filename">{source.filename}</span>
      <div className="hint">
        upload <code className="id">{source.upload_id}</code>
      </div>
    </>
  );
}
