import { useEffect, useRef, useState, type DragEvent } from 'react';
import {
  api,
  ApiFailure,
  newIdempotencyKey,
  OUTPUT_DEFAULTS,
  RESOLUTIONS,
  uploadFile,
  type AudioOptions,
  type Credits,
  type Job,
  type JobApi,
  type JobEstimate,
  type Sdr2HdrOptions,
  type UploadResult,
} from '../api';
import { formatBytes, formatCredits, formatNumber, formatSeconds, formatUsd, percent } from '../format';
import { Link, navigate } from '../router';
import { useCanChange } from '../session';
import { ErrorNotice, Loading, Notice, PageTitle, Progress, useAction, useLoad } from '../ui';

const ACCEPT: Record<JobApi, string> = {
  sdr2hdr: 'video/mp4,video/quicktime,.mp4,.mov',
  audio: 'audio/wav,audio/x-wav,audio/mp4,audio/x-m4a,video/mp4,.wav,.m4a,.mp4',
};

type UploadState =
  | { phase: 'idle' }
  | { phase: 'uploading'; file: File; sent: number; total: number; abort: () => void }
  | { phase: 'done'; file: File; upload: UploadResult }
  | { phase: 'failed'; file: File; error: unknown };

/**
 * Pick an API, drop a file (uploaded at once, with a byte progress bar), set the options, see the
 * price (POST /v1/{api}/jobs/estimate: no hold, no job), submit, and land on the job's page.
 */
export function NewJobPage() {
  const canChange = useCanChange();
  const credits = useLoad('new-job:credits', () => api<Credits>('GET', '/v1/account/credits'));
  const [jobApi, setJobApi] = useState<JobApi>('sdr2hdr');
  const [upload, setUpload] = useState<UploadState>({ phase: 'idle' });
  const [sdr2hdr, setSdr2hdr] = useState<Sdr2HdrOptions>(OUTPUT_DEFAULTS.sdr2hdr);
  const [audio, setAudio] = useState<AudioOptions>(OUTPUT_DEFAULTS.audio);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  // One key per submit intent: a retried click after a network failure cannot create a second job.
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey);

  const apis = credits.data?.limits?.apis ?? ['sdr2hdr', 'audio'];
  // HLG has no mastering peak: the API refuses one, so the form does not send it.
  const output = jobApi === 'sdr2hdr' ? (sdr2hdr.transfer === 'hlg' ? withoutPeak(sdr2hdr) : sdr2hdr) : audio;
  const uploadId = upload.phase === 'done' ? upload.upload.upload_id : null;
  const body = uploadId ? { inputs: [{ upload_id: uploadId }], output, metadata: { source: 'dashboard' } } : null;
  const bodyKey = body ? `${jobApi}:${JSON.stringify(body)}` : '';

  useEffect(() => setIdempotencyKey(newIdempotencyKey()), [bodyKey]);

  const estimate = useEstimate(jobApi, body, bodyKey);

  const submit = useAction(async () => {
    const job = await api<Job>('POST', `/v1/${jobApi}/jobs`, { body, idempotencyKey });
    navigate(`/jobs/${job.api}/${job.job_id}`);
  });

  const start = (file: File) => {
    if (upload.phase === 'uploading') upload.abort();
    const { done, abort } = uploadFile(file, (sent, total) =>
      setUpload({ phase: 'uploading', file, sent, total, abort }),
    );
    setUpload({ phase: 'uploading', file, sent: 0, total: file.size, abort });
    done.then(
      (result) => setUpload({ phase: 'done', file, upload: result }),
      (error: unknown) => setUpload({ phase: 'failed', file, error }),
    );
  };
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    const file = event.dataTransfer.files[0];
    if (!file) return;
    // The file input shows what was dropped too (else it keeps saying "No file chosen").
    if (fileInput.current) fileInput.current.files = event.dataTransfer.files;
    start(file);
  };

  if (!canChange) {
    return (
      <>
        <PageTitle>New job</PageTitle>
        <Notice>Your role (viewer) can look at jobs but not start them. Ask an owner for the developer role.</Notice>
      </>
    );
  }
  return (
    <>
      <PageTitle>New job</PageTitle>
      {credits.error ? <ErrorNotice error={credits.error} /> : null}
      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          if (body) void submit.run();
        }}
      >
        <fieldset>
          <legend>What to do</legend>
          {(['sdr2hdr', 'audio'] as const).map((name) => (
            <div className="check" key={name}>
              <input
                id={`api-${name}`}
                type="radio"
                name="api"
                value={name}
                checked={jobApi === name}
                disabled={!apis.includes(name)}
                onChange={() => setJobApi(name)}
              />
              <label htmlFor={`api-${name}`}>
                {name === 'sdr2hdr' ? 'SDR video → HDR10 (HEVC Main10, BT.2020, PQ)' : 'Speech loudness normalisation'}
                {!apis.includes(name) && <span className="hint"> — not in your plan</span>}
              </label>
            </div>
          ))}
        </fieldset>

        <div
          className={`dropzone${dragging ? ' dragging' : ''}`}
          onDragOver={(event) => {
            event.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <label htmlFor="file">
            <strong>Drop a file here</strong> or choose one ({jobApi === 'sdr2hdr' ? 'MP4 or MOV' : 'WAV, M4A or MP4'})
          </label>
          <input
            id="file"
            ref={fileInput}
            type="file"
            accept={ACCEPT[jobApi]}
            onChange={(event) => {
              const file = event.target.files?.[0];
              if (file) start(file);
            }}
          />
          {upload.phase === 'uploading' && (
            <Progress
              label="Upload"
              value={upload.sent}
              max={Math.max(upload.total, 1)}
              text={`Uploading ${upload.file.name}: ${formatBytes(upload.sent)} of ${formatBytes(upload.total)} (${percent(upload.sent, upload.total)} %)`}
            />
          )}
          {upload.phase === 'done' && (
            <>
              <Progress
                label="Upload"
                value={1}
                max={1}
                text={`Uploaded ${upload.file.name} (${formatBytes(upload.upload.size_bytes)})`}
              />
              <p className="hint">
                Upload <code>{upload.upload.upload_id}</code>, SHA-256 <code>{upload.upload.sha256.slice(0, 16)}…</code>
              </p>
            </>
          )}
          {upload.phase === 'failed' && (
            <ErrorNotice error={upload.error} title={`Could not upload ${upload.file.name}`} />
          )}
        </div>

        {jobApi === 'sdr2hdr' ? (
          <fieldset>
            <legend>Output</legend>
            <div className="field">
              <label htmlFor="resolution">Resolution</label>
              <select
                id="resolution"
                aria-describedby="resolution-hint"
                value={sdr2hdr.resolution}
                onChange={(event) =>
                  setSdr2hdr({ ...sdr2hdr, resolution: event.target.value as Sdr2HdrOptions['resolution'] })
                }
              >
                {RESOLUTIONS.map((resolution) => (
                  <option key={resolution} value={resolution}>
                    {resolution === 'source' ? 'Same as the source' : resolution}
                  </option>
                ))}
              </select>
              <p id="resolution-hint" className="hint">
                Lines of the short side. Never upscaled: a smaller source keeps its own size, and is priced for it.
              </p>
            </div>
            <div className="field">
              <label htmlFor="mapping">Highlights</label>
              <select
                id="mapping"
                value={sdr2hdr.mapping}
                onChange={(event) =>
                  setSdr2hdr({ ...sdr2hdr, mapping: event.target.value as Sdr2HdrOptions['mapping'] })
                }
              >
                <option value="reference">Reference (default): looks like the SDR source, white at 203 cd/m²</option>
                <option value="expand">Expand: shadows and mid-tones kept, highlights brightened up to the peak</option>
              </select>
            </div>
            <div className="field">
              <label htmlFor="transfer">HDR format</label>
              <select
                id="transfer"
                value={sdr2hdr.transfer}
                onChange={(event) =>
                  setSdr2hdr({ ...sdr2hdr, transfer: event.target.value as Sdr2HdrOptions['transfer'] })
                }
              >
                <option value="pq">HDR10 (PQ, default): absolute light levels, for streaming and TVs</option>
                <option value="hlg">HLG: relative to each display, for broadcast; no mastering peak</option>
              </select>
            </div>
            <div className="field">
              <label htmlFor="peak-nits">Mastering peak (cd/m², 400–10000; HDR10 only)</label>
              <input
                id="peak-nits"
                type="number"
                min={400}
                max={10000}
                step={1}
                disabled={sdr2hdr.transfer === 'hlg'}
                value={sdr2hdr.peak_nits}
                onChange={(event) => setSdr2hdr({ ...sdr2hdr, peak_nits: Number(event.target.value) })}
              />
            </div>
            <div className="field">
              <label htmlFor="container">Container</label>
              <select
                id="container"
                value={sdr2hdr.container}
                onChange={(event) =>
                  setSdr2hdr({ ...sdr2hdr, container: event.target.value as Sdr2HdrOptions['container'] })
                }
              >
                <option value="mp4">MP4</option>
                <option value="mov">MOV</option>
              </select>
            </div>
            <div className="field">
              <label htmlFor="quality">Quality (same price)</label>
              <select
                id="quality"
                value={sdr2hdr.quality}
                onChange={(event) =>
                  setSdr2hdr({ ...sdr2hdr, quality: event.target.value as Sdr2HdrOptions['quality'] })
                }
              >
                <option value="fast">Fast: shortest wait, lower fidelity</option>
                <option value="balanced">Balanced (default)</option>
                <option value="best">Best: highest fidelity, longer wait</option>
              </select>
            </div>
          </fieldset>
        ) : (
          <fieldset>
            <legend>Output</legend>
            <div className="field">
              <label htmlFor="target-lufs">Target loudness (LUFS, −40 to −5)</label>
              <input
                id="target-lufs"
                type="number"
                min={-40}
                max={-5}
                step={0.5}
                value={audio.target_lufs}
                onChange={(event) => setAudio({ ...audio, target_lufs: Number(event.target.value) })}
              />
            </div>
            <div className="field">
              <label htmlFor="container">Container</label>
              <select
                id="container"
                value={audio.container}
                onChange={(event) => setAudio({ ...audio, container: event.target.value as AudioOptions['container'] })}
              >
                <option value="wav">WAV</option>
                <option value="m4a">M4A</option>
              </select>
            </div>
          </fieldset>
        )}

        <section aria-labelledby="estimate-heading" aria-live="polite" className="estimate">
          <h2 id="estimate-heading">Price</h2>
          {!body ? (
            <p>Upload a file to see what the job will cost before you start it.</p>
          ) : estimate.loading ? (
            <Loading what="the estimate" />
          ) : estimate.error ? (
            <ErrorNotice error={estimate.error} title="No estimate" />
          ) : estimate.data ? (
            <>
              <p className="estimate-value">
                {formatCredits(estimate.data.estimated_credits)} ({formatUsd(estimate.data.estimated_usd)}) for{' '}
                {formatSeconds(estimate.data.duration_seconds)} of media
              </p>
              {jobApi === 'sdr2hdr' && <EstimatedPictures estimate={estimate.data} asked={sdr2hdr.resolution} />}
              <p className="estimate-time">
                Processing takes about {formatSeconds(estimate.data.estimated_seconds)} once a worker starts it.
              </p>
              {credits.data && (
                <p className="hint">
                  {formatNumber(credits.data.available_credits)} credits available. The estimate is held when you start
                  the job; you are charged for what is processed, never more.
                </p>
              )}
              {!estimate.data.accepted && estimate.data.error && (
                <ErrorNotice error={estimate.data.error} title="This job would be refused now" />
              )}
            </>
          ) : null}
        </section>

        {submit.error ? <ErrorNotice error={submit.error} title="The job was not started" /> : null}
        <button
          type="submit"
          className="primary"
          disabled={!body || submit.busy || (estimate.data !== null && !estimate.data.accepted)}
        >
          {submit.busy ? 'Starting…' : 'Start job'}
        </button>
        {!credits.data && !credits.error && <Loading what="your plan" />}
        <p className="hint">
          Or submit from code: <Link to="/keys">create an API key</Link>, then POST to <code>/v1/{jobApi}/jobs</code>.
        </p>
      </form>
    </>
  );
}

const LINES: Record<Sdr2HdrOptions['resolution'], number> = { source: 0, '720p': 720, '1080p': 1080, '2160p': 2160 };

/** What each input will become, saying so when the source is smaller than the resolution asked for. */
function EstimatedPictures({ estimate, asked }: { estimate: JobEstimate; asked: Sdr2HdrOptions['resolution'] }) {
  const pictures = estimate.items.filter(
    (item) => item.width && item.height && item.output_width && item.output_height,
  );
  if (pictures.length === 0) return null;
  return (
    <ul className="estimate-pictures">
      {pictures.map((item) => {
        const shortSide = Math.min(item.width!, item.height!);
        return (
          <li key={item.index}>
            Output {item.output_width}×{item.output_height}
            {shortSide < LINES[asked]
              ? ` — the source is ${item.width}×${item.height}, smaller than ${asked}: it keeps its size (never upscaled) and is priced for it.`
              : item.output_width === item.width && item.output_height === item.height
                ? ' (the source’s size)'
                : ` (from ${item.width}×${item.height})`}
          </li>
        );
      })}
    </ul>
  );
}

/** The price of `body` from the API, asked again (debounced) whenever it changes. */
function useEstimate(jobApi: JobApi, body: object | null, bodyKey: string) {
  const [state, setState] = useState<{ key: string; data: JobEstimate | null; error: unknown; loading: boolean }>({
    key: '',
    data: null,
    error: null,
    loading: false,
  });
  useEffect(() => {
    if (!body) return;
    let cancelled = false;
    setState({ key: bodyKey, data: null, error: null, loading: true });
    const timer = setTimeout(() => {
      api<JobEstimate>('POST', `/v1/${jobApi}/jobs/estimate`, { body }).then(
        (data) => !cancelled && setState({ key: bodyKey, data, error: null, loading: false }),
        (error: unknown) =>
          !cancelled && setState({ key: bodyKey, data: null, error: estimateError(error), loading: false }),
      );
    }, 300);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
    // bodyKey stands for body (a new object on every render).
  }, [jobApi, bodyKey]);
  return state.key === bodyKey ? state : { data: null, error: null, loading: Boolean(body) };
}

function estimateError(error: unknown): unknown {
  // A server without the estimate endpoint (the path then reads as a job id, which takes GET only):
  // say so rather than guess a price.
  const code = error instanceof ApiFailure ? error.error?.code : undefined;
  if (error instanceof ApiFailure && error.error && (code === 'route_not_found' || code === 'method_not_allowed')) {
    return new ApiFailure(error.status, {
      ...error.error,
      message:
        'This server cannot estimate prices yet (no POST /v1/{api}/jobs/estimate). You can still start the job: its held credits show on the job page.',
    });
  }
  return error;
}

function withoutPeak(options: Sdr2HdrOptions): Omit<Sdr2HdrOptions, 'peak_nits'> {
  const { resolution, container, quality, mapping, transfer } = options;
  return { resolution, container, quality, mapping, transfer };
}
