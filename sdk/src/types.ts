// The service's requests and responses, named for the client: aliases of the types generated from
// the service's own OpenAPI document (generated/openapi.ts, `npm run generate:types`), so the SDK and
// the server cannot disagree silently. Written by hand here: only what the document cannot say (a job
// input is a URL *or* an upload; a list is generic over its items; which statuses are final).

import {
  audioOutputDtoContainerValues,
  createApiKeyDtoScopesValues,
  jobResponseStatusValues,
  schemaDefaults,
  sdr2HdrOutputDtoContainerValues,
  sdr2HdrOutputDtoMappingValues,
  sdr2HdrOutputDtoQualityValues,
  sdr2HdrOutputDtoTransferValues,
  sdr2HdrOutputDtoResolutionValues,
  type components,
  type operations,
} from './generated/openapi.js';

type Schemas = components['schemas'];
/** The query parameters of an operation of the document. */
type QueryOf<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;

export type Api = Schemas['JobResponse']['api'];

export type JobStatus = Schemas['JobResponse']['status'];
/** Every status a job can be in, in the order of its life. */
export const JOB_STATUSES: readonly JobStatus[] = jobResponseStatusValues;
/** Whether a status is final; a status the document adds fails to compile here until it is placed. */
const IS_TERMINAL: Record<JobStatus, boolean> = {
  queued: false,
  processing: false,
  succeeded: true,
  partially_succeeded: true,
  failed: true,
  cancelled: true,
};
export const TERMINAL_STATUSES: readonly JobStatus[] = JOB_STATUSES.filter((status) => IS_TERMINAL[status]);

export type ErrorType = Schemas['ErrorObject']['type'];
export type ErrorCode = Schemas['ErrorObject']['code'];
/**
 * The `error` object of the envelope, as the client reads it: `type` and `code` may be ones this
 * version does not know yet (clients must tolerate new codes), and only type, code and message are
 * relied on (the rest is read when present).
 */
export type ErrorObject = Pick<Schemas['ErrorObject'], 'message'> &
  Partial<Omit<Schemas['ErrorObject'], 'type' | 'code' | 'message'>> & {
    type: ErrorType | (string & {});
    code: ErrorCode | (string & {});
  };

/** One page of a list (`limit`, `starting_after`), as every list endpoint returns it. */
export type ListResponse<T> = Omit<Schemas['JobResponseList'], 'data'> & { data: T[] };
export type ListParams = QueryOf<'accountLedger'>;

type JobInputDto = Schemas['JobInputDto'];
/** A source: a public http(s) URL, or an upload from uploads.create. */
export type JobInput = Required<Pick<JobInputDto, 'source_url'>> | Required<Pick<JobInputDto, 'upload_id'>>;
/** A local file not uploaded yet, described for an estimate (width and height for sdr2hdr). */
export type DescribedMediaInput = Required<Pick<JobInputDto, 'media'>>;

export type Sdr2HdrOutput = Schemas['Sdr2HdrOutputDto'];
export type AudioOutput = Schemas['AudioOutputDto'];
export type Sdr2HdrJobParams = Omit<Schemas['SubmitSdr2HdrJobDto'], 'inputs'> & { inputs: JobInput[] };
export type AudioJobParams = Omit<Schemas['SubmitAudioJobDto'], 'inputs'> & { inputs: JobInput[] };
/** The body of an estimate: a submit's body whose inputs may also be described files. */
export type EstimateParams<Params> = Omit<Params, 'inputs'> & { inputs: (JobInput | DescribedMediaInput)[] };
export type JobListParams = QueryOf<'sdr2HdrJobsList'>;

/** The choices of each output option, and what the service uses when one is left out. */
export const OUTPUT_OPTIONS = {
  sdr2hdr: {
    resolution: sdr2HdrOutputDtoResolutionValues,
    container: sdr2HdrOutputDtoContainerValues,
    quality: sdr2HdrOutputDtoQualityValues,
    mapping: sdr2HdrOutputDtoMappingValues,
    transfer: sdr2HdrOutputDtoTransferValues,
    defaults: schemaDefaults.Sdr2HdrOutputDto,
  },
  audio: { container: audioOutputDtoContainerValues, defaults: schemaDefaults.AudioOutputDto },
} as const;

export type JobView = Schemas['JobResponse'];
export type JobItem = Schemas['JobItemResponse'];
/** A succeeded item's output; `url` is an absolute, signed, expiring link (no API key needed). */
export type JobOutput = Schemas['ItemOutputResponse'];
export type JobEstimate = Schemas['JobEstimateResponse'];
export type JobEstimateItem = Schemas['JobEstimateItemResponse'];

export type ApiKeyScope = Schemas['CreateApiKeyDto']['scopes'][number];
/** Every scope a key can be given. */
export const API_KEY_SCOPES: readonly ApiKeyScope[] = createApiKeyDtoScopesValues;
export type ApiKey = Schemas['ApiKeyResponse'];
/** A key as created or rotated: the only answers that carry the full `key`. */
export type ApiKeyWithSecret = Schemas['ApiKeyWithSecretResponse'];
export type CreateApiKeyParams = Schemas['CreateApiKeyDto'];
export type RotateApiKeyParams = Schemas['RotateApiKeyDto'];

export type Upload = Schemas['UploadResponse'];
export type CreditBalance = Schemas['CreditBalanceResponse'];
export type LedgerEntry = Schemas['LedgerEntryResponse'];

export type WebhookEventType = Schemas['EventResponse']['event'];
export type WebhookEndpoint = Schemas['WebhookEndpointResponse'];
/** An endpoint as created or after a secret rotation: the only answers that carry `secret`. */
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecretResponse'];
/** An endpoint as it was when deleted (`deleted: true`). */
export type DeletedWebhookEndpoint = Schemas['DeletedWebhookEndpointResponse'];
export type CreateWebhookEndpointParams = Schemas['CreateWebhookEndpointDto'];
export type WebhookDelivery = Schemas['WebhookDeliveryResponse'];
/** An event as GET /v1/events lists it; `data` is the body its webhook deliveries carry. */
export type WebhookEventRecord = Schemas['EventResponse'];
export type EventListParams = QueryOf<'eventsList'>;

export type LicenseActivation = Schemas['LicenseActivationResponse'];
export type LicenseDeactivation = Schemas['LicenseDeactivationResponse'];
export type LicenseEntitlements = Schemas['LicenseEntitlementsResponse'];
export type LicensePublicKey = Schemas['PublicJwkResponse'];
export type ActivateLicenseParams = Schemas['ActivateLicenseDto'];
export type LicenseDeviceParams = Schemas['LicenseDeviceDto'];

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
