// Shapes of the service's requests and responses (docs/api-decisions.md §3, §4, §6, §7). Fields the service may
// add later are tolerated: every object type is open to extra keys through the index signature.

import type { ErrorObject } from './errors.js';

export type Api = 'sdr2hdr' | 'audio';

export type JobStatus = 'queued' | 'processing' | 'succeeded' | 'partially_succeeded' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: readonly JobStatus[] = ['succeeded', 'partially_succeeded', 'failed', 'cancelled'];

export interface ListResponse<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface ListParams {
  limit?: number;
  starting_after?: string;
}

export type JobInput = { source_url: string } | { upload_id: string };

/** A local file not uploaded yet, described for an estimate (width and height for sdr2hdr). */
export interface DescribedMediaInput {
  media: { duration_seconds: number; width?: number; height?: number };
}

/** The body of an estimate: a submit's body whose inputs may also be described files. */
export type EstimateParams<Params> = Omit<Params, 'inputs'> & { inputs: (JobInput | DescribedMediaInput)[] };

export interface Sdr2HdrJobParams {
  inputs: JobInput[];
  output?: {
    resolution?: 'source' | '720p' | '1080p' | '2160p';
    peak_nits?: number;
    container?: 'mp4' | 'mov';
    /** Speed or fidelity of the encode; `balanced` when omitted. Same price for all three. */
    quality?: 'fast' | 'balanced' | 'best';
    /**
     * Where the SDR light goes: `reference` (default) keeps SDR white at 203 cd/m² (ITU-R BT.2408);
     * `expand` keeps everything up to 50 % signal there and expands the top half toward `peak_nits`.
     */
    mapping?: 'reference' | 'expand';
    /** `pq` (HDR10, default) or `hlg` (BT.2100 HLG; takes no `peak_nits`). */
    transfer?: 'pq' | 'hlg';
  };
  metadata?: Record<string, string>;
  region?: string;
}

export interface AudioJobParams {
  inputs: JobInput[];
  output?: { target_lufs?: number; container?: 'wav' | 'm4a' };
  metadata?: Record<string, string>;
  region?: string;
}

export interface JobOutput {
  asset_id: string;
  /** Absolute, signed link (GET /v1/assets/{asset_id}/content?expires=…&signature=…): no API key needed. */
  url: string;
  /** When `url` stops working; read the job again for a fresh link. */
  expires_at: string;
  size_bytes: number;
  container: string;
  /** sdr2hdr outputs: {codec: 'hevc', hdr: 'HDR10' | 'HLG', transfer, light, …}. */
  video?: VideoOutput;
  /** audio outputs: the measured loudness and format. */
  audio?: Record<string, unknown>;
  [key: string]: unknown;
}

/** An sdr2hdr output as made. */
export interface VideoOutput {
  codec: 'hevc';
  profile: 'main10';
  width: number;
  height: number;
  hdr: 'HDR10' | 'HLG';
  transfer: 'smpte2084' | 'arib-std-b67';
  primaries: 'bt2020';
  quality?: string;
  /** Where the light went, measured from the picture (absent on jobs made before it). */
  light?: OutputLight;
  [key: string]: unknown;
}

export interface OutputLight {
  mapping: 'reference' | 'expand';
  /** ST 2086 mastering peak, cd/m²; null for HLG. */
  mastering_peak_nits: number | null;
  /** The brightest pixel, max(R,G,B), cd/m²; null for HLG. */
  max_cll: number | null;
  /** The brightest frame average, cd/m²; null for HLG. */
  max_fall: number | null;
}

export interface JobItem {
  index: number;
  status: JobStatus;
  /** {type: 'url', url} or {type: 'upload', upload_id}. */
  source: Record<string, unknown>;
  duration_seconds: number | null;
  width?: number | null;
  height?: number | null;
  estimated_credits: number;
  charged_credits: number;
  output: JobOutput | null;
  error: ErrorObject | null;
  [key: string]: unknown;
}

export interface JobView {
  object: 'job';
  job_id: string;
  api: Api;
  status: JobStatus;
  /** The region whose workers run the job. */
  region?: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: number;
  items: JobItem[];
  billing: {
    estimated_credits: number;
    charged_credits: number;
    refunded: boolean;
    state: string;
    [key: string]: unknown;
  };
  error: ErrorObject | null;
  metadata: Record<string, string>;
  [key: string]: unknown;
}

/** POST /v1/{api}/jobs/estimate: what a submit of the same body would cost and whether it would be accepted now. */
export interface JobEstimate {
  object: 'job_estimate';
  api: Api;
  region: string;
  estimated_credits: number;
  /** estimated_credits at the account's plan price, rounded to the cent. */
  estimated_usd: number;
  usd_per_credit: number;
  /**
   * Processing time of the job on the region's live workers, its items in parallel (one worker: their
   * sum; a worker per item: the longest); the wait in the queue is not counted.
   */
  estimated_seconds: number;
  /** Seconds of media in the inputs. */
  duration_seconds: number;
  items: JobEstimateItem[];
  /** Whether the submit would pass quota, concurrency, spend cap, balance and queue depth now. */
  accepted: boolean;
  /** When not accepted: the error object the submit would get (code, message, details); else null. */
  error: ErrorObject | null;
  [key: string]: unknown;
}

export interface JobEstimateItem {
  index: number;
  source: Record<string, unknown>;
  duration_seconds: number;
  /** The source's picture size (null for audio). */
  width: number | null;
  height: number | null;
  estimated_credits: number;
  estimated_usd: number;
  /** This item's processing time on one idle worker. */
  estimated_seconds: number;
  [key: string]: unknown;
}

export type ApiKeyScope = 'sdr2hdr' | 'audio' | 'account' | 'keys' | 'webhooks';

export interface ApiKey {
  object: 'api_key';
  id: string;
  /** The visible start of the key (mjk_…), enough to recognise it. */
  prefix: string;
  scopes: ApiKeyScope[];
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
  /** The full key: only in the response to create or rotate. */
  key?: string;
  [key: string]: unknown;
}

export interface Upload {
  object: 'upload';
  upload_id: string;
  size_bytes: number;
  /** Hex SHA-256 of the stored bytes. */
  sha256: string;
  content_type: string | null;
  created_at: string;
  expires_at: string;
  [key: string]: unknown;
}

export interface CreditBalance {
  object: 'credit_balance';
  balance_credits: number;
  reserved_credits: number;
  available_credits: number;
  plan: string;
  spend_limit_usd: number | null;
  spent_usd: number;
  period_start: string;
  period_resets_at: string;
  quota: { processing_minutes_limit: number | null; processing_minutes_used: number };
  [key: string]: unknown;
}

export interface LedgerEntry {
  object: 'ledger_entry';
  id: string;
  kind: 'grant' | 'authorise' | 'capture' | 'release' | (string & {});
  credits: number;
  job_id: string | null;
  reason: string | null;
  balance_after: number;
  reserved_after: number;
  created_at: string;
  [key: string]: unknown;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  /** Present only when the secret is shown: at creation and after a rotation. */
  secret?: string;
  [key: string]: unknown;
}

export interface WebhookDelivery {
  object: 'webhook_delivery';
  id: string;
  endpoint_id: string;
  event_id: string;
  event: string;
  redelivery: boolean;
  state: string;
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
  attempts: {
    attempt: number;
    attempted_at: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
  }[];
  [key: string]: unknown;
}

/** An event as GET /v1/events lists it; `payload`-style fields follow the webhook body (docs/api-decisions.md §6). */
export interface WebhookEventRecord {
  id: string;
  event: string;
  created_at: string;
  [key: string]: unknown;
}

export interface EventListParams extends ListParams {
  /** Only events of this type, e.g. job.failed. */
  type?: string;
  /** Only events of this job. */
  job_id?: string;
}

export interface LicenseActivation {
  activation_id: string;
  license: { id: string; plan: string; expires_at: string; max_devices: number; active_devices: number };
  token: string;
  offline_grace_until: string;
  [key: string]: unknown;
}

export interface LicensePublicKey {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  /** Thumbprint of the key (RFC 7638); tokens carry it in their header. */
  kid?: string;
  [key: string]: unknown;
}

/** Per-call options accepted by every resource method. */
export interface RequestOptions {
  /** Sent as Idempotency-Key on POST; generated when absent, and reused by every retry of the call. */
  idempotencyKey?: string;
  /** Overrides the client's per-attempt timeout (ms). */
  timeoutMs?: number;
  /** Overrides the client's maxRetries for this call: lowers table 7.11's caps (0: no retry), never raises them. */
  maxRetries?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}
