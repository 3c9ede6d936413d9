// The dashboard speaks the public /v1 API with its session cookie, like any client with a key:
// changes carry the session's X-CSRF-Token, every POST an Idempotency-Key, and every failure is
// the service's error envelope.

export interface ErrorObject {
  type: string;
  code: string;
  message: string;
  param: string | null;
  request_id: string;
  doc_url: string;
  retryable: boolean;
  details?: Record<string, unknown>;
}

/** A request that failed: the envelope when the service answered, else a network failure. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: ErrorObject | null,
  ) {
    super(error?.message ?? 'The service could not be reached. Check your connection and try again.');
  }
}

let csrfToken: string | null = null;
let sessionEnded: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when any request finds the session over (signed out elsewhere, expired, revoked); null: nobody listens. */
export function onSessionEnded(handler: (() => void) | null): void {
  sessionEnded = handler;
}

function failureOf(status: number, body: unknown): ApiFailure {
  const error = (body as { error?: ErrorObject } | null)?.error ?? null;
  if (error?.code === 'invalid_session') sessionEnded?.();
  return new ApiFailure(status, error);
}

export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined | null>;
  idempotencyKey?: string;
}

export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  if (method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? newIdempotencyKey();
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiFailure(0, null);
  }
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) throw failureOf(response.status, body);
  return body as T;
}

export interface UploadResult {
  object?: string;
  upload_id: string;
  size_bytes: number;
  sha256: string;
  expires_at: string;
}

/** POST /v1/uploads with the raw file, reporting bytes sent (fetch has no upload progress; XHR does). */
export function uploadFile(
  file: File,
  onProgress: (sent: number, total: number) => void,
): { done: Promise<UploadResult>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const done = new Promise<UploadResult>((resolve, reject) => {
    xhr.open('POST', '/v1/uploads');
    xhr.withCredentials = true;
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    if (csrfToken) xhr.setRequestHeader('x-csrf-token', csrfToken);
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(file.size, file.size);
        resolve(body as UploadResult);
      } else reject(failureOf(xhr.status, body));
    };
    xhr.onerror = () => reject(new ApiFailure(0, null));
    xhr.onabort = () => reject(new ApiFailure(0, null));
    xhr.send(file);
  });
  return { done, abort: () => xhr.abort() };
}

// ---- the shapes the pages read (the subset they use) ----

export type Role = 'owner' | 'developer' | 'viewer';

export interface Member {
  object: 'member';
  id: string;
  email: string;
  role: Role;
  status: 'invited' | 'active';
  invited_at: string;
  joined_at: string | null;
  last_sign_in_at: string | null;
  invitation_expires_at: string | null;
  invite_url?: string;
}

export interface Session {
  object: 'session';
  member: Member;
  account: { id: string; name: string; plan: string; status: string };
  csrf_token: string;
  expires_at: string;
  idle_timeout_seconds: number;
}

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface Credits {
  balance_credits: number;
  reserved_credits: number;
  available_credits: number;
  plan: string;
  spend_limit_usd: number | null;
  spent_usd: number;
  period_start: string;
  period_resets_at: string;
  quota: { processing_minutes_limit: number | null; processing_minutes_used: number };
  limits?: { requests_per_second: number; concurrent_jobs: number; max_output_height: number; apis: string[] };
  running_jobs?: number;
}

export interface Usage {
  days: { date: string; charged_credits: number; charged_usd: number }[];
  total_charged_credits: number;
  total_charged_usd: number;
}

export interface Account {
  id: string;
  name: string;
  plan: string;
  status: string;
  spend_limit_usd: number | null;
}

export const SCOPES = ['sdr2hdr', 'audio', 'account', 'keys', 'webhooks'] as const;

export interface ApiKey {
  id: string;
  prefix: string;
  scopes: string[];
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
  key?: string;
}

export type JobApi = 'sdr2hdr' | 'audio';
export const JOB_STATUSES = [
  'queued',
  'processing',
  'succeeded',
  'partially_succeeded',
  'failed',
  'cancelled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface JobItem {
  index: number;
  status: string;
  source: { type: 'url'; url: string } | { type: 'upload'; upload_id: string };
  duration_seconds: number;
  width: number | null;
  height: number | null;
  estimated_credits: number;
  charged_credits: number;
  output: {
    asset_id: string;
    url: string;
    expires_at: string;
    size_bytes: number;
    container: string;
    video?: {
      hdr: 'HDR10' | 'HLG';
      transfer: string;
      light?: {
        mapping: 'reference' | 'expand';
        mastering_peak_nits: number | null;
        max_cll: number | null;
        max_fall: number | null;
      };
    };
  } | null;
  error: ErrorObject | null;
}

export interface Job {
  job_id: string;
  api: JobApi;
  status: JobStatus;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: number;
  items: JobItem[];
  billing: { estimated_credits: number; charged_credits: number; refunded: boolean; state: string };
  error: ErrorObject | null;
  metadata: Record<string, string>;
}

export function isRunning(status: JobStatus): boolean {
  return status === 'queued' || status === 'processing';
}

/** POST /v1/{api}/jobs/estimate: the price and verdict of a submit body, without a job or a hold. */
export interface JobEstimate {
  object: 'job_estimate';
  estimated_credits: number;
  estimated_usd: number;
  usd_per_credit: number;
  /** Processing time on one idle worker (not the wait in the queue). */
  estimated_seconds: number;
  /** Seconds of media in the inputs. */
  duration_seconds: number;
  accepted: boolean;
  /** When not accepted: the error the submit would get now. */
  error: ErrorObject | null;
}

export const WEBHOOK_EVENTS = ['job.succeeded', 'job.partially_succeeded', 'job.failed', 'job.cancelled'] as const;

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  secret?: string;
}

export interface Delivery {
  id: string;
  event_id: string;
  event: string;
  redelivery: boolean;
  state: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  attempts: {
    attempt: number;
    attempted_at: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
  }[];
}

export interface License {
  id: string;
  key_prefix: string;
  plan: string;
  status: 'active' | 'expired' | 'revoked';
  max_devices: number;
  active_devices: number;
  expires_at: string;
  devices: {
    activation_id: string;
    device_id: string;
    name: string | null;
    first_seen_at: string;
    last_seen_at: string;
  }[];
}
