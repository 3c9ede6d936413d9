// The dashboard speaks the public /v1 API with its session cookie, like any client with a key:
// changes carry the session's X-CSRF-Token, every POST an Idempotency-Key, and every failure is
// the service's error envelope. The shapes are the ones generated from the service's OpenAPI
// document for the SDK (`npm run generate:types`), named here for the pages.
import {
  createApiKeyDtoScopesValues,
  createWebhookEndpointDtoEventsValues,
  jobResponseStatusValues,
  ledgerEntryResponseKindValues,
  schemaDefaults,
  sdr2HdrOutputDtoResolutionValues,
  type components,
} from '../../sdk/src/generated/openapi';

type Schemas = components['schemas'];

export type ErrorObject = Schemas['ErrorObject'];

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

export type UploadResult = Schemas['UploadResponse'];

/** POST /v1/uploads with the raw file, reporting bytes sent (fetch has no upload progress; XHR does). */
export function uploadFile(
  file: File,
  onProgress: (sent: number, total: number) => void,
): { done: Promise<UploadResult>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const done = new Promise<UploadResult>((resolve, reject) => {
    // Named after the file, so the jobs list and the job page show its name (a name the API would refuse,
    // longer than 255 characters, is left out rather than failing the upload).
    const named = file.name && file.name.length <= 255 ? `?filename=${encodeURIComponent(file.name)}` : '';
    xhr.open('POST', `/v1/uploads${named}`);
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

// ---- the shapes the pages read, and the lists they offer ----

export type Role = Schemas['MemberResponse']['role'];
/** A member; `invite_url` only in the answer to an invitation. */
export type Member = Schemas['MemberResponse'] & Partial<Pick<Schemas['InvitedMemberResponse'], 'invite_url'>>;
export type Session = Schemas['SessionResponse'];
export type List<T> = Omit<Schemas['JobResponseList'], 'data'> & { data: T[] };
export type Credits = Schemas['CreditBalanceResponse'];
export type Usage = Schemas['UsageResponse'];
export type Account = Schemas['OwnAccountResponse'];
export type LedgerEntry = Schemas['LedgerEntryResponse'];
export type LedgerKind = LedgerEntry['kind'];
export const LEDGER_KINDS = ledgerEntryResponseKindValues;
export type MonthlySpend = Schemas['MonthlySpendResponse'];

export const SCOPES = createApiKeyDtoScopesValues;
/** A key; `key` (the secret) only in the answers to create and rotate. */
export type ApiKey = Schemas['ApiKeyResponse'] & Partial<Pick<Schemas['ApiKeyWithSecretResponse'], 'key'>>;

export type JobApi = Schemas['JobResponse']['api'];
export const JOB_STATUSES = jobResponseStatusValues;
export type JobStatus = Schemas['JobResponse']['status'];
export type JobItem = Schemas['JobItemResponse'];
export type Job = Schemas['JobResponse'];
/**
 * The output options of each API, and what the service uses for each one left out. The form makes files:
 * a package's fields (`package`, `ladder`, `codecs`, issue 41) are not among its options yet.
 */
export type Sdr2HdrOptions = Required<Omit<Schemas['Sdr2HdrOutputDto'], 'package' | 'ladder' | 'codecs'>>;
export type AudioOptions = Required<Schemas['AudioOutputDto']>;
export const OUTPUT_DEFAULTS: { sdr2hdr: Sdr2HdrOptions; audio: AudioOptions } = {
  sdr2hdr: schemaDefaults.Sdr2HdrOutputDto,
  audio: schemaDefaults.AudioOutputDto,
};

/** The sdr2hdr output resolutions the service accepts, in its order. */
export const RESOLUTIONS = sdr2HdrOutputDtoResolutionValues;

/**
 * Which statuses can still change (docs/api-decisions.md §4: the job lifecycle's open statuses). The
 * contract lists the statuses but not which are open, so this says it once per status of the contract's
 * type: a status the service adds fails the dashboard's type check here until it is placed.
 */
const OPEN: Record<JobStatus, boolean> = {
  queued: true,
  processing: true,
  succeeded: false,
  partially_succeeded: false,
  failed: false,
  cancelled: false,
};

export function isRunning(status: JobStatus): boolean {
  return OPEN[status];
}

/** POST /v1/{api}/jobs/estimate: the price and verdict of a submit body, without a job or a hold. */
export type JobEstimate = Schemas['JobEstimateResponse'];

export const WEBHOOK_EVENTS = createWebhookEndpointDtoEventsValues;
/** An endpoint; `secret` only in the answers to create and rotate. */
export type WebhookEndpoint = Schemas['WebhookEndpointResponse'] &
  Partial<Pick<Schemas['WebhookEndpointWithSecretResponse'], 'secret'>>;
export type Delivery = Schemas['WebhookDeliveryResponse'];
export type License = Schemas['AccountLicenseResponse'];
