// Resource namespaces: each method is one endpoint of docs/api-decisions.md, nothing more.

import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { ApiPromise, type PagePromise } from './api-promise.js';
import { LicenseError } from './errors.js';
import { streamEvents, type EventStreamOptions, type StreamedEvent } from './event-stream.js';
import type { HttpClient, UploadBody } from './http.js';
import { OFFLINE_GRACE_EXPIRED } from './retry.js';
import {
  verifyLicenseToken,
  type LicenseVerificationKey,
  type VerifiedLicense,
  type VerifyOfflineOptions,
} from './license-token.js';
import type {
  ActivateLicenseParams,
  Api,
  ApiKey,
  ApiKeyWithSecret,
  AudioJobParams,
  CreateApiKeyParams,
  CreateWebhookEndpointParams,
  CreditBalance,
  DeletedWebhookEndpoint,
  EstimateParams,
  EventListParams,
  JobEstimate,
  JobListParams,
  JobView,
  LedgerEntry,
  LicenseActivation,
  LicenseDeactivation,
  LicenseDeviceParams,
  LicenseEntitlements,
  LicensePublicKey,
  ListParams,
  ListResponse,
  RequestOptions,
  RotateApiKeyParams,
  Sdr2HdrJobParams,
  Upload,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEventRecord,
} from './types.js';

const segment = (id: string): string => encodeURIComponent(id);

export class JobsResource<Params> {
  constructor(
    private readonly http: HttpClient,
    readonly api: Api,
  ) {}

  /** Submits a job (202 with the job view). */
  create(params: Params, options?: RequestOptions): ApiPromise<JobView> {
    return this.http.request({ method: 'POST', path: `/v1/${this.api}/jobs`, json: params, options });
  }

  /**
   * Prices a submit of `params` without submitting it: credits, USD at the account's price, the
   * processing time, and whether the submit would be accepted now (if not, `error` is the error it
   * would get). No job, no hold. Source and shape errors raise, as the submit would.
   */
  estimate(params: EstimateParams<Params>, options?: RequestOptions): ApiPromise<JobEstimate> {
    return this.http.request({ method: 'POST', path: `/v1/${this.api}/jobs/estimate`, json: params, options });
  }

  retrieve(jobId: string, options?: RequestOptions): ApiPromise<JobView> {
    return this.http.request({ method: 'GET', path: `/v1/${this.api}/jobs/${segment(jobId)}`, options });
  }

  /** The account's jobs of this API, newest first. */
  list(params: JobListParams = {}, options?: RequestOptions): PagePromise<JobView> {
    return this.http.list({ method: 'GET', path: `/v1/${this.api}/jobs`, query: { ...params }, options });
  }

  cancel(jobId: string, options?: RequestOptions): ApiPromise<JobView> {
    return this.http.request({ method: 'POST', path: `/v1/${this.api}/jobs/${segment(jobId)}/cancel`, options });
  }
}

export class UploadsResource {
  constructor(private readonly http: HttpClient) {}

  /**
   * Uploads raw media (POST /v1/uploads, 201). `contentType` is the media's type (video/*, audio/*);
   * without it the body goes as application/octet-stream. `filename` names the upload (the job view's
   * `items[i].source.filename` and the dashboard show it instead of the upload id). Bytes and stream factories are retried
   * like any call; a stream passed as is can be read only once, so that call is never retried.
   */
  create(
    body: UploadBody,
    params: { contentType?: string; filename?: string } = {},
    options?: RequestOptions,
  ): ApiPromise<Upload> {
    const query = params.filename === undefined ? undefined : { filename: params.filename };
    return this.http.request({
      method: 'POST',
      path: '/v1/uploads',
      body,
      contentType: params.contentType,
      query,
      options,
    });
  }

  /**
   * Uploads a file from disk; each retry reopens it, so the upload is retried like any call.
   * `onProgress(sentBytes)` is called as the file is read into the request (from 0 again on a retry).
   * The upload is named after the file (its base name) unless `filename` says otherwise.
   */
  createFromFile(
    path: string,
    params: { contentType?: string; filename?: string; onProgress?: (sentBytes: number) => void } = {},
    options?: RequestOptions,
  ): ApiPromise<Upload> {
    const { onProgress, ...rest } = params;
    const open = (): Readable => {
      const stream = createReadStream(path);
      if (!onProgress) return stream;
      let sent = 0;
      return stream.pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            sent += chunk.length;
            onProgress(sent);
            done(null, chunk);
          },
        }),
      );
    };
    return this.create(open, { filename: basename(path), ...rest }, options);
  }
}

export class AssetsResource {
  constructor(private readonly http: HttpClient) {}

  /**
   * Fetches an output by its `items[i].output.url`, an absolute, signed and expiring link: the
   * signature is the credential, so the API key is never sent with it. The body is left unread.
   */
  download(url: string, options?: RequestOptions): Promise<Response> {
    return this.http.requestStream({ method: 'GET', path: url, headers: { accept: '*/*' }, auth: false, options });
  }
}

export class AccountResource {
  constructor(private readonly http: HttpClient) {}

  credits(options?: RequestOptions): ApiPromise<CreditBalance> {
    return this.http.request({ method: 'GET', path: '/v1/account/credits', options });
  }

  ledger(params: ListParams = {}, options?: RequestOptions): PagePromise<LedgerEntry> {
    return this.http.list({ method: 'GET', path: '/v1/account/ledger', query: { ...params }, options });
  }
}

export class ApiKeysResource {
  constructor(private readonly http: HttpClient) {}

  /** The full key (`key`, mjk_…) is in this response only. Needs the `keys` scope, as every method here. */
  create(params: CreateApiKeyParams, options?: RequestOptions): ApiPromise<ApiKeyWithSecret> {
    return this.http.request({ method: 'POST', path: '/v1/account/api-keys', json: params, options });
  }

  /** The account's keys, newest first (prefixes, never the keys). */
  list(params: ListParams = {}, options?: RequestOptions): PagePromise<ApiKey> {
    return this.http.list({ method: 'GET', path: '/v1/account/api-keys', query: { ...params }, options });
  }

  /** Revokes a key: every request with it is refused (revoked_api_key) from then on. */
  revoke(keyId: string, options?: RequestOptions): ApiPromise<ApiKey> {
    return this.http.request({ method: 'DELETE', path: `/v1/account/api-keys/${segment(keyId)}`, options });
  }

  /** A new key with the same scopes (shown once); the old one is revoked after `grace_seconds`. */
  rotate(keyId: string, params: RotateApiKeyParams = {}, options?: RequestOptions): ApiPromise<ApiKeyWithSecret> {
    return this.http.request({
      method: 'POST',
      path: `/v1/account/api-keys/${segment(keyId)}/rotate`,
      json: params,
      options,
    });
  }
}

export class WebhookEndpointsResource {
  constructor(private readonly http: HttpClient) {}

  /** The returned `secret` (whsec_…) is shown once: store it for webhooks.verify. */
  create(params: CreateWebhookEndpointParams, options?: RequestOptions): ApiPromise<WebhookEndpointWithSecret> {
    return this.http.request({ method: 'POST', path: '/v1/webhook-endpoints', json: params, options });
  }

  list(params: ListParams = {}, options?: RequestOptions): PagePromise<WebhookEndpoint> {
    return this.http.list({ method: 'GET', path: '/v1/webhook-endpoints', query: { ...params }, options });
  }

  delete(endpointId: string, options?: RequestOptions): ApiPromise<DeletedWebhookEndpoint> {
    return this.http.request({ method: 'DELETE', path: `/v1/webhook-endpoints/${segment(endpointId)}`, options });
  }

  rotateSecret(endpointId: string, options?: RequestOptions): ApiPromise<WebhookEndpointWithSecret> {
    return this.http.request({
      method: 'POST',
      path: `/v1/webhook-endpoints/${segment(endpointId)}/rotate-secret`,
      options,
    });
  }

  deliveries(endpointId: string, params: ListParams = {}, options?: RequestOptions): PagePromise<WebhookDelivery> {
    return this.http.list({
      method: 'GET',
      path: `/v1/webhook-endpoints/${segment(endpointId)}/deliveries`,
      query: { ...params },
      options,
    });
  }
}

export class EventsResource {
  constructor(private readonly http: HttpClient) {}

  /** Recent webhook events of the account, newest first (GET /v1/events). */
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<WebhookEventRecord> {
    return this.http.list({ method: 'GET', path: '/v1/events', query: { ...params }, options });
  }

  /**
   * The account's events as they happen (GET /v1/events/stream, needs the `webhooks` scope): an async
   * iterable that reconnects with Last-Event-ID after a dropped connection. Stop it with `signal`.
   */
  stream(options: EventStreamOptions = {}): AsyncGenerator<StreamedEvent> {
    return streamEvents(this.http, options);
  }

  /** Queues the event for delivery again to its endpoints (POST /v1/events/{id}/redeliver). */
  redeliver(eventId: string, options?: RequestOptions): ApiPromise<ListResponse<WebhookDelivery>> {
    return this.http.request({ method: 'POST', path: `/v1/events/${segment(eventId)}/redeliver`, options });
  }
}

/** What license.retrieve needs to renew an expired offline grace by itself (validate online, then retry). */
export interface LicenseRevalidation {
  license_key: string;
  device_id: string;
  /** Receives the fresh activation (its `token` replaces the old one; store it for offline use). */
  onValidated?: (activation: LicenseActivation) => void;
}

export class LicenseResource {
  constructor(private readonly http: HttpClient) {}

  activate(params: ActivateLicenseParams, options?: RequestOptions): ApiPromise<LicenseActivation> {
    return this.http.request({ method: 'POST', path: '/v1/license/activate', json: params, options });
  }

  validate(params: LicenseDeviceParams, options?: RequestOptions): ApiPromise<LicenseActivation> {
    return this.http.request({ method: 'POST', path: '/v1/license/validate', json: params, options });
  }

  deactivate(params: LicenseDeviceParams, options?: RequestOptions): ApiPromise<LicenseDeactivation> {
    return this.http.request({ method: 'POST', path: '/v1/license/deactivate', json: params, options });
  }

  /**
   * The licence's entitlements for a token from activate/validate. With `revalidate` (the licence key
   * and device id), a token past its offline grace (403 offline_grace_expired, retryable) is retried
   * as table 7.11 and the specification's SDK column say: the client validates online once, hands
   * the fresh activation to `onValidated` (keep its token), and retries with the new token.
   */
  retrieve(
    token: string,
    options?: RequestOptions & { revalidate?: LicenseRevalidation },
  ): ApiPromise<LicenseEntitlements> {
    const { revalidate, ...requestOptions } = options ?? {};
    const read = (current: string) =>
      this.http
        .request<LicenseEntitlements>({
          method: 'GET',
          path: '/v1/license',
          headers: { 'x-license-token': current },
          options: requestOptions,
        })
        .withResponse();
    if (!revalidate) return new ApiPromise(read(token));
    return new ApiPromise(
      read(token).catch(async (error: unknown) => {
        if (!(error instanceof LicenseError) || error.code !== OFFLINE_GRACE_EXPIRED) throw error;
        const fresh = await this.validate(
          { license_key: revalidate.license_key, device_id: revalidate.device_id },
          requestOptions,
        );
        revalidate.onValidated?.(fresh);
        const again = await read(fresh.token);
        return { ...again, response: { ...again.response, retries: again.response.retries + 1 } };
      }),
    );
  }

  /** The Ed25519 JWK that verifies licence tokens offline. */
  publicKey(options?: RequestOptions): ApiPromise<LicensePublicKey> {
    return this.http.request({ method: 'GET', path: '/v1/license/public-key', options });
  }

  /**
   * Checks a token without the network (signature, expiry, offline grace, clock rollback; the rules
   * are in license-token.ts). Throws LicenseError offline_grace_expired when online validation is due.
   */
  verifyOffline(
    token: string,
    publicKeyJwk: LicenseVerificationKey,
    now: Date | number = Date.now(),
    options: VerifyOfflineOptions = {},
  ): VerifiedLicense {
    return verifyLicenseToken(token, publicKeyJwk, now, options);
  }
}

export type Sdr2HdrJobs = JobsResource<Sdr2HdrJobParams>;
export type AudioJobs = JobsResource<AudioJobParams>;
