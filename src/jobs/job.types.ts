import type { ErrorObject } from '../common/errors';
import type { OutputOptions } from './output-options';

/** The job kinds (API.md §4): each has its own path, scope, output options and price. */
export const JOB_APIS = ['sdr2hdr', 'audio'] as const;
export type JobApi = (typeof JOB_APIS)[number];

export const TERMINAL_STATUSES = ['succeeded', 'partially_succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = 'queued' | 'processing' | (typeof TERMINAL_STATUSES)[number];
export type ItemStatus = 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled';
export type BillingState = 'authorised' | 'settled' | 'released';

export type ItemSource = { type: 'url'; url: string } | { type: 'upload'; upload_id: string };

export interface ItemOutput {
  asset_id: string;
  size_bytes: number;
  container: string;
  video?: Record<string, unknown>;
  audio?: Record<string, unknown>;
}

export interface JobRow {
  id: string;
  account_id: string;
  api: JobApi;
  status: JobStatus;
  region: string;
  output_options: OutputOptions;
  metadata: Record<string, string>;
  estimated_credits: string;
  charged_credits: string;
  billing_state: BillingState;
  error: ErrorObject | null;
  progress: number;
  request_id: string;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** The columns that fill a JobRow and a JobItemRow, for every query that reads them. */
export const JOB_COLUMNS = `id, account_id, api, status, region, output_options, metadata, estimated_credits, charged_credits,
  billing_state, error, progress, request_id, attempts, created_at, started_at, finished_at`;
// numeric and bigint columns are read as text in both forms, as the driver reads them in rows.
const ITEM_FIELDS = {
  job_id: 'job_id',
  index: 'index',
  status: 'status',
  source: 'source',
  duration_seconds: 'duration_seconds::text',
  width: 'width',
  height: 'height',
  estimated_credits: 'estimated_credits::text',
  charged_credits: 'charged_credits::text',
  output: 'output',
  error: 'error',
  worker: 'worker',
};
export const ITEM_COLUMNS = Object.keys(ITEM_FIELDS).join(', ');
/** A job's items as one JSON array (ordered by index), so a job and its items are one query. */
export const ITEMS_JSON = `(SELECT COALESCE(json_agg(json_build_object(${Object.entries(ITEM_FIELDS)
  .map(([name, expression]) => `'${name}', i.${expression}`)
  .join(', ')}) ORDER BY i.index), '[]') FROM job_items i WHERE i.job_id = jobs.id)`;

export interface JobItemRow {
  job_id: string;
  index: number;
  status: ItemStatus;
  source: ItemSource & { probe_key?: string };
  duration_seconds: string;
  width: number | null;
  height: number | null;
  estimated_credits: string;
  charged_credits: string;
  output: ItemOutput | null;
  error: ErrorObject | null;
  /** The worker that ran (or runs) the item, an opaque id; null until one takes it. */
  worker: string | null;
}

export function isTerminal(status: JobStatus): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}
