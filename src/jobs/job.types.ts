import { types } from 'pg';
import type { ErrorObject } from '../common/errors';
import type { JobApi } from './job-api';
import type { OutputOptions } from './output-options';
import type { OutputSpec } from '../media/output-spec';

export { JOB_APIS, type JobApi } from './job-api';

export const TERMINAL_STATUSES = ['succeeded', 'partially_succeeded', 'failed', 'cancelled'] as const;
/** Every status a job can be in, in the order of its life: the one list the API's validation and document use. */
export const JOB_STATUSES = ['queued', 'processing', ...TERMINAL_STATUSES] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** The statuses a job ends in. */
export type EndStatus = Extract<JobStatus, 'succeeded' | 'partially_succeeded' | 'failed' | 'cancelled'>;
export type ItemStatus = 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled';
/** What a processing item is doing now (items[i].phase). */
export const ITEM_PHASES = ['encoding', 'joining', 'storing'] as const;
export type ItemPhase = (typeof ITEM_PHASES)[number];
export type BillingState = 'authorised' | 'settled' | 'released';

/** An item's source; an upload's `filename` is copied from the upload at submit (absent on items older than it). */
export type ItemSource = { type: 'url'; url: string } | { type: 'upload'; upload_id: string; filename?: string | null };

export interface ItemOutput {
  asset_id: string;
  size_bytes: number;
  container: string;
  video?: Record<string, unknown>;
  audio?: Record<string, unknown>;
  /** An HLS package's renditions as measured (docs/api-guide.md, "Streaming packages"), instead of `video`. */
  renditions?: Record<string, unknown>[];
  /** The light map's asset (sdr2hdr): signed into `light_map_url` by the job view, never shown itself. */
  light_map_asset_id?: string;
  /** The time of the frame the light map shows (seconds from the item's start); null when not recorded. */
  light_map_frame_seconds?: number | null;
}

/** One check of an item's output: what was expected, what the output file measured, and whether it passed. */
export interface ItemCheck {
  name: string;
  passed: boolean;
  expected: string;
  measured: string | number | null;
}

export interface JobRow {
  id: string;
  account_id: string;
  api: JobApi;
  status: JobStatus;
  region: string;
  output_options: OutputOptions;
  /**
   * What the worker makes of it (src/media/output-spec.ts), written by the submit; null only for jobs that
   * had ended before the spec existed (migrations/1765610000000-job-output-spec.ts), which never run again.
   */
  output_spec: OutputSpec | null;
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

// The columns that fill a JobRow and a JobItemRow, for every query that reads them: name → expression.
// numeric and bigint columns are read as text in both forms (rows and JSON), as the driver reads them
// in rows; in the JSON form timestamps are text too, parsed by the driver's own parser (jobFromJson).
const JOB_FIELDS = {
  id: 'id',
  account_id: 'account_id',
  api: 'api',
  status: 'status',
  region: 'region',
  output_options: 'output_options',
  output_spec: 'output_spec',
  metadata: 'metadata',
  estimated_credits: 'estimated_credits::text',
  charged_credits: 'charged_credits::text',
  billing_state: 'billing_state',
  error: 'error',
  progress: 'progress',
  request_id: 'request_id',
  attempts: 'attempts',
  created_at: 'created_at::text',
  started_at: 'started_at::text',
  finished_at: 'finished_at::text',
};
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
  processed_seconds: 'processed_seconds::text',
  output: 'output',
  checks: 'checks',
  error: 'error',
  worker: 'worker',
  phase: 'phase',
};
export const JOB_COLUMNS = Object.keys(JOB_FIELDS).join(', ');
export const ITEM_COLUMNS = Object.keys(ITEM_FIELDS).join(', ');

/** `'name', table.expression, …` for json_build_object. */
const jsonPairs = (fields: Record<string, string>, table: string): string =>
  Object.entries(fields)
    .map(([name, expression]) => `'${name}', ${table}.${expression}`)
    .join(', ');

/** The items of the job row `job` as one JSON array (ordered by index), from `items` (a table or a CTE). */
const itemsJsonOf = (job: string, items: string): string =>
  `(SELECT COALESCE(json_agg(json_build_object(${jsonPairs(ITEM_FIELDS, 'i')}) ORDER BY i.index), '[]') FROM ${items} i WHERE i.job_id = ${job}.id)`;

/**
 * A job and its items as one JSON value (read it with jobFromJson), from the job row `job` and the item
 * rows `items` (a table or a CTE; those of `job.id`, ordered by index).
 */
export const jobJsonOf = (job: string, items: string): string =>
  `json_build_object(${jsonPairs(JOB_FIELDS, job)}, 'items', ${itemsJsonOf(job, items)})`;

/** A job's items as one JSON array (ordered by index), so a job and its items are one query. */
export const ITEMS_JSON = itemsJsonOf('jobs', 'job_items');

/**
 * A job and its items as one JSON value (read it with jobFromJson). The hot job read takes this form:
 * the driver then parses one column with JSON.parse instead of 18 one by one (its per-column work
 * measured as ~25 µs of a read's ~250 µs of CPU in bench/reads); PostgreSQL builds it for about what
 * the columns cost it.
 */
export const JOB_JSON = jobJsonOf('jobs', 'job_items');

/**
 * Which jobs their owner still sees: unfinished ones, and finished ones until `days` (an SQL
 * expression) after they finished — the processing sweeper deletes them after that.
 */
export const retainedJob = (days: string): string =>
  `(finished_at IS NULL OR finished_at > now() - make_interval(days => ${days}))`;

export type JobJson = Omit<JobRow, 'created_at' | 'started_at' | 'finished_at'> & {
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  items: JobItemRow[];
};

const parseTimestamp = types.getTypeParser(types.builtins.TIMESTAMPTZ) as (text: string) => Date;

/** The job and items of a JOB_JSON value, exactly as the driver reads them from rows. */
export function jobFromJson({ items, ...job }: JobJson): { job: JobRow; items: JobItemRow[] } {
  return {
    job: {
      ...job,
      created_at: parseTimestamp(job.created_at),
      started_at: job.started_at === null ? null : parseTimestamp(job.started_at),
      finished_at: job.finished_at === null ? null : parseTimestamp(job.finished_at),
    },
    items,
  };
}

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
  /** Seconds of the source the worker decoded and encoded (0 until the item succeeded). */
  processed_seconds: string;
  output: ItemOutput | null;
  /** The output's checks, run as the item ended (docs/api-decisions.md §12); empty until then. */
  checks: ItemCheck[];
  error: ErrorObject | null;
  /** The worker that ran (or runs) the item, an opaque id; null until one takes it. */
  worker: string | null;
  /** The last phase a worker marked (kept after the item ends; the view shows it while processing). */
  phase: ItemPhase | null;
}

export function isTerminal(status: JobStatus): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}
