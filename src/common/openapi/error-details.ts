// The `details` of the error codes that carry some: the specification's section 2.4 shapes plus the
// ones this service adds, each field with its type. Read by the errors page, the OpenAPI examples,
// and the e2e suites' response check (a details field not listed here fails the test that saw it).
import type { ErrorCode } from '../errors/catalogue';

export interface DetailField {
  name: string;
  type: 'integer' | 'number' | 'string' | 'date-time' | 'boolean' | 'array' | 'object';
  description: string;
  /** Named by the specification (section 2.4); the others are ours. */
  spec?: true;
  /** Absent in some answers (see the description). */
  optional?: true;
}

export interface DetailsShape {
  fields: DetailField[];
  example: Record<string, unknown>;
}

const RATE_LIMIT: DetailsShape = {
  fields: [
    { name: 'limit', type: 'integer', description: 'Requests allowed per window.', spec: true },
    { name: 'window_seconds', type: 'integer', description: 'Length of the window.', spec: true },
    {
      name: 'retry_after_seconds',
      type: 'integer',
      description: 'Seconds to wait; equals the Retry-After header.',
      spec: true,
    },
  ],
  example: { limit: 100, window_seconds: 1, retry_after_seconds: 1 },
};

/** Partial failures (a job.partially_succeeded job's `error`, whatever its code): the pro-rata settlement. */
export const PARTIAL_FAILURE_DETAILS: DetailsShape = {
  fields: [
    {
      name: 'items',
      type: 'array',
      description:
        'Per item: index, status, estimated_credits, charged_credits, error_code (null for a succeeded item).',
      spec: true,
    },
    { name: 'succeeded_items', type: 'integer', description: 'Items that succeeded (and were charged).' },
    { name: 'failed_items', type: 'integer', description: 'Items that failed (charged 0).' },
    { name: 'estimated_credits', type: 'integer', description: 'Held at submit for the whole job.' },
    { name: 'charged_credits', type: 'integer', description: 'Charged: the succeeded items only.' },
  ],
  example: {
    items: [
      { index: 0, status: 'succeeded', estimated_credits: 13, charged_credits: 13, error_code: null },
      { index: 1, status: 'failed', estimated_credits: 8, charged_credits: 0, error_code: 'invalid_media' },
    ],
    succeeded_items: 1,
    failed_items: 1,
    estimated_credits: 21,
    charged_credits: 13,
  },
};

export const ERROR_DETAILS: Partial<Record<ErrorCode, DetailsShape>> = {
  output_check_failed: {
    fields: [
      {
        name: 'check',
        type: 'string',
        description:
          "The first check the output failed (the item's `checks` lists them all): hdr_signalling, frame_count, duration, round_trip_ssim, integrated_loudness, true_peak, or readable.",
      },
      { name: 'expected', type: 'string', description: 'The condition the output had to meet, in words.' },
      {
        name: 'measured',
        type: 'string',
        description: 'What the output file measured: a number where the check is numeric, else a string.',
      },
    ],
    example: { check: 'frame_count', expected: '300', measured: 299 },
  },
  insufficient_credits: {
    fields: [
      { name: 'required_credits', type: 'integer', description: 'The estimate of this job.', spec: true },
      { name: 'available_credits', type: 'integer', description: 'Balance minus what open jobs hold.', spec: true },
      {
        name: 'topup_url',
        type: 'string',
        description: "Where to buy credits: the operator's page (BILLING_TOPUP_URL); absent when none is configured.",
        optional: true,
      },
    ],
    example: { required_credits: 130, available_credits: 42, topup_url: 'https://billing.mediajobs.example/topup' },
  },
  spend_limit_exceeded: {
    fields: [
      { name: 'spend_limit_usd', type: 'number', description: 'The monthly cap.', spec: true },
      { name: 'spent_usd', type: 'number', description: 'Charged this period.', spec: true },
      { name: 'held_usd', type: 'number', description: 'Held by jobs that have not ended.' },
      { name: 'required_usd', type: 'number', description: 'The estimate of this job.' },
      { name: 'reset_at', type: 'date-time', description: 'When the period (and the spend) resets.', spec: true },
    ],
    example: {
      spend_limit_usd: 50,
      spent_usd: 49.2,
      held_usd: 0.6,
      required_usd: 0.78,
      reset_at: '2026-02-01T00:00:00.000Z',
    },
  },
  // One shape per quota: which fields are present says which quota was used up.
  quota_exceeded: {
    fields: [
      {
        name: 'processing_minutes_limit',
        type: 'integer',
        description: "The plan's minutes per month (processing quota).",
        optional: true,
      },
      { name: 'processing_minutes_used', type: 'integer', description: 'Used this period.', optional: true },
      { name: 'required_minutes', type: 'integer', description: 'What this job would use.', optional: true },
      { name: 'reset_at', type: 'date-time', description: 'When the period resets.', optional: true },
      {
        name: 'upload_bytes_limit',
        type: 'integer',
        description: "The plan's bytes an account may hold in live uploads (POST /v1/uploads).",
        optional: true,
      },
      {
        name: 'upload_bytes_used',
        type: 'integer',
        description: 'Bytes the account holds in live uploads now (an upload counts until it expires).',
        optional: true,
      },
      {
        name: 'webhook_endpoints_limit',
        type: 'integer',
        description: "The plan's webhook endpoints per account (POST /v1/webhook-endpoints).",
        optional: true,
      },
      {
        name: 'webhook_endpoints_used',
        type: 'integer',
        description: 'Endpoints the account has now.',
        optional: true,
      },
    ],
    example: {
      processing_minutes_limit: 600,
      processing_minutes_used: 598,
      required_minutes: 4,
      reset_at: '2026-02-01T00:00:00.000Z',
    },
  },
  // Present when the picture is known to be over the workers' budget (the estimate; not a media process killed).
  out_of_memory: {
    fields: [
      { name: 'width', type: 'integer', description: 'Picture width of the input.', optional: true },
      { name: 'height', type: 'integer', description: 'Picture height of the input.', optional: true },
      {
        name: 'max_pixels',
        type: 'integer',
        description: "The workers' pixels per frame (WORKER_MAX_PIXELS).",
        optional: true,
      },
    ],
    example: { width: 7680, height: 4320, max_pixels: 8294400 },
  },
  // Present when the output picture has more pixels than the plan's largest output (not for an API or a resolution the plan lacks).
  plan_not_supported: {
    fields: [
      { name: 'output_width', type: 'integer', description: 'Width of the output picture.', optional: true },
      { name: 'output_height', type: 'integer', description: 'Height of the output picture.', optional: true },
      { name: 'output_pixels', type: 'integer', description: 'Pixels per frame of the output.', optional: true },
      {
        name: 'max_output_pixels',
        type: 'integer',
        description: "The plan's largest output in pixels: its resolution's 16:9 picture (1080p: 1920×1080).",
        optional: true,
      },
    ],
    example: { output_width: 11520, output_height: 720, output_pixels: 8294400, max_output_pixels: 2073600 },
  },
  webhook_endpoint_exists: {
    fields: [{ name: 'endpoint_id', type: 'string', description: 'The endpoint with this URL and these events.' }],
    example: { endpoint_id: 'we_01HZX3Q7W8K2M5N9P4R6T1V3Y5' },
  },
  rate_limit_exceeded: RATE_LIMIT,
  concurrency_limit_exceeded: {
    fields: [
      { name: 'concurrency_limit', type: 'integer', description: "The plan's jobs at once.", spec: true },
      { name: 'running_jobs', type: 'integer', description: 'Queued and processing now.', spec: true },
    ],
    example: { concurrency_limit: 10, running_jobs: 10 },
  },
  stream_limit_exceeded: {
    fields: [
      { name: 'limit', type: 'integer', description: "The plan's open event streams per account." },
      { name: 'open_streams', type: 'integer', description: 'Streams of the account open now.' },
    ],
    example: { limit: 2, open_streams: 2 },
  },
  resume_point_expired: {
    fields: [
      { name: 'retention_days', type: 'integer', description: 'How long events are kept (JOB_RETENTION_DAYS).' },
      { name: 'oldest_kept_at', type: 'date-time', description: 'Events created before this may be gone.' },
    ],
    example: { retention_days: 30, oldest_kept_at: '2026-01-01T00:00:00.000Z' },
  },
  file_too_large: {
    fields: [
      { name: 'max_upload_bytes', type: 'integer', description: 'Upload limit (POST /v1/uploads).', optional: true },
      { name: 'size_bytes', type: 'integer', description: 'Size of the source URL’s file.', optional: true },
      { name: 'max_source_bytes', type: 'integer', description: 'Limit for a source URL.', optional: true },
    ],
    example: { size_bytes: 6442450944, max_source_bytes: 5368709120 },
  },
  duration_exceeded: {
    fields: [
      { name: 'duration_seconds', type: 'number', description: 'Duration of the input.' },
      { name: 'max_duration_seconds', type: 'integer', description: 'Longest input accepted.' },
    ],
    example: { duration_seconds: 7260.5, max_duration_seconds: 7200 },
  },
  request_timeout: {
    fields: [
      {
        name: 'min_bytes_per_second',
        type: 'integer',
        description: 'The slowest body rate accepted (REQUEST_BODY_MIN_BYTES_PER_SECOND).',
      },
      { name: 'window_seconds', type: 'integer', description: 'The window the rate is measured over.' },
    ],
    example: { min_bytes_per_second: 1024, window_seconds: 10 },
  },
  region_unavailable: {
    fields: [{ name: 'region', type: 'string', description: 'The region that cannot take jobs now.' }],
    example: { region: 'eu-west' },
  },
  job_not_cancellable: {
    fields: [
      { name: 'status', type: 'string', description: 'The job’s status now.' },
      {
        name: 'cancel_window_seconds',
        type: 'integer',
        description: 'How long after it starts a processing job can be cancelled.',
        optional: true,
      },
    ],
    example: { status: 'processing', cancel_window_seconds: 30 },
  },
  maintenance_window: {
    fields: [{ name: 'until', type: 'date-time', description: 'Announced end, when known.', optional: true }],
    example: { until: '2026-01-01T06:00:00Z' },
  },
  service_unavailable: {
    fields: [
      {
        name: 'down',
        type: 'array',
        description: 'Readiness probe only: the dependencies that do not answer (postgres, redis).',
        optional: true,
      },
      {
        name: 'account_probes_running',
        type: 'integer',
        description:
          "A source check that found no probe slot: the account's sources being inspected on this server now.",
        optional: true,
      },
      {
        name: 'max_probes_per_account',
        type: 'integer',
        description: 'A source check that found no probe slot: how many one account may have inspected at once.',
        optional: true,
      },
      {
        name: 'probe_seconds_limit',
        type: 'integer',
        description:
          "A request whose sources took too long to inspect: the seconds one request's sources may take in all.",
        optional: true,
      },
    ],
    example: { down: ['redis'] },
  },
  activation_limit_reached: {
    fields: [
      { name: 'max_devices', type: 'integer', description: 'Seats of the licence.' },
      { name: 'active_devices', type: 'integer', description: 'Devices holding a seat now.' },
    ],
    example: { max_devices: 3, active_devices: 3 },
  },
  offline_grace_expired: {
    fields: [{ name: 'offline_grace_until', type: 'date-time', description: 'When the token stopped being valid.' }],
    example: { offline_grace_until: '2026-01-08T09:30:00.000Z' },
  },
  license_expired: {
    fields: [{ name: 'expires_at', type: 'date-time', description: 'When the licence expired.' }],
    example: { expires_at: '2026-01-01T00:00:00.000Z' },
  },
};

/** The details fields an error response with this code may carry (a job's partial failure aside). */
export function allowedDetailFields(code: string): string[] {
  return ERROR_DETAILS[code as ErrorCode]?.fields.map((field) => field.name) ?? [];
}
