// The client: resource namespaces over one HttpClient, plus waitForJob.

import { ProcessingError, TimeoutError, errorFromObject } from './errors.js';
import { HttpClient } from './http.js';
import type { HttpClientOptions } from './http.js';
import {
  AccountResource,
  ApiKeysResource,
  AssetsResource,
  EventsResource,
  JobsResource,
  LicenseResource,
  UploadsResource,
  WebhookEndpointsResource,
} from './resources.js';
import { TERMINAL_STATUSES } from './types.js';
import type { Api, AudioJobParams, JobView, Sdr2HdrJobParams } from './types.js';
import { Webhooks } from './webhooks.js';

export type MediaJobsOptions = HttpClientOptions;

export interface WaitOptions {
  /** Called with the job view after every poll. */
  onProgress?: (job: JobView) => void;
  /** First delay between polls (default 1 s); it grows by half each poll up to maxPollIntervalMs. */
  pollIntervalMs?: number;
  /** The longest delay between polls (default 10 s); a progress display may want 1 s throughout. */
  maxPollIntervalMs?: number;
  /** Gives up with TimeoutError (code wait_timeout) after this long (default 1 h). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export const MAX_POLL_INTERVAL_MS = 10_000;

export class MediaJobs {
  readonly sdr2hdr: { jobs: JobsResource<Sdr2HdrJobParams> };
  readonly audio: { jobs: JobsResource<AudioJobParams> };
  readonly uploads: UploadsResource;
  readonly assets: AssetsResource;
  readonly account: AccountResource;
  readonly apiKeys: ApiKeysResource;
  readonly webhookEndpoints: WebhookEndpointsResource;
  readonly events: EventsResource;
  readonly license: LicenseResource;
  readonly webhooks = new Webhooks();
  private readonly http: HttpClient;

  constructor(options: MediaJobsOptions = {}) {
    this.http = new HttpClient(options);
    this.sdr2hdr = { jobs: new JobsResource(this.http, 'sdr2hdr') };
    this.audio = { jobs: new JobsResource(this.http, 'audio') };
    this.uploads = new UploadsResource(this.http);
    this.assets = new AssetsResource(this.http);
    this.account = new AccountResource(this.http);
    this.apiKeys = new ApiKeysResource(this.http);
    this.webhookEndpoints = new WebhookEndpointsResource(this.http);
    this.events = new EventsResource(this.http);
    this.license = new LicenseResource(this.http);
  }

  /**
   * Polls a job until it reaches a terminal status and returns it (succeeded or
   * partially_succeeded: check items[i].error for the latter). A failed or cancelled job raises
   * ProcessingError built from the job's error. It only reads: a failed job is never resubmitted.
   */
  async waitForJob(api: Api, jobId: string, options: WaitOptions = {}): Promise<JobView> {
    const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
    let interval = options.pollIntervalMs ?? 1000;
    for (;;) {
      const job = await this[api].jobs.retrieve(jobId, { signal: options.signal });
      options.onProgress?.(job);
      if (job.status === 'failed' || job.status === 'cancelled') throw jobError(job);
      if (TERMINAL_STATUSES.includes(job.status)) return job;
      if (Date.now() + interval > deadline) {
        throw new TimeoutError(`Job ${jobId} was still ${job.status} when the wait timed out.`, {
          code: 'wait_timeout',
        });
      }
      await this.http.sleep(interval);
      interval = Math.min(Math.round(interval * 1.5), options.maxPollIntervalMs ?? MAX_POLL_INTERVAL_MS);
    }
  }
}

/** The error a failed or cancelled job carries, as a ProcessingError with the job attached. */
export function jobError(job: JobView): ProcessingError {
  const cancelled = job.status === 'cancelled';
  const cause = job.error ?? {
    // The service always fills `error` on these statuses; this covers a view that lacks it.
    type: 'processing_error',
    code: cancelled ? 'job_cancelled' : 'processing_failed',
    message: cancelled ? `Job ${job.job_id} was cancelled.` : `Job ${job.job_id} failed.`,
    retryable: false,
  };
  const error = errorFromObject(cause, { status: null }, ProcessingError) as ProcessingError;
  error.job = job;
  return error;
}
