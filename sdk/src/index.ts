export { MediaJobs, jobError, MAX_POLL_INTERVAL_MS } from './client.js';
export type { MediaJobsOptions, WaitOptions } from './client.js';
export {
  MediaJobsError,
  AuthError,
  BillingError,
  RateLimitError,
  InvalidRequestError,
  ResourceError,
  ProcessingError,
  OutputCheckFailedError,
  ServerError,
  LicenseError,
  ConnectionError,
  TimeoutError,
} from './errors.js';
export { DEFAULT_TIMEOUT_MS } from './http.js';
export type { MediaJobsLogger, RetryEvent, UploadBody } from './http.js';
export { ApiPromise, PagePromise, MAX_TO_ARRAY } from './api-promise.js';
export type { RateLimitInfo, ResponseInfo, WithResponse } from './api-promise.js';
export {
  decideRetry,
  backoffDelayMs,
  retryCap,
  parseRetryAfter,
  RETRY_CAPS,
  MAX_RETRY_AFTER_SECONDS,
  RETRY_STOP_REASONS,
  OFFLINE_GRACE_EXPIRED,
} from './retry.js';
export type { RetryContext, RetryDecision, RetryStopReason } from './retry.js';
export type { LicenseRevalidation } from './resources.js';
export { verifyWebhook, signWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_SECONDS } from './webhooks.js';
export type { WebhookEvent, WebhookHeaders } from './webhooks.js';
export { verifyLicenseToken, LICENSE_TOKEN_TYP, MAX_CLOCK_SKEW_SECONDS } from './license-token.js';
export type {
  LicenseTokenClaims,
  LicenseVerificationKey,
  VerifiedLicense,
  VerifyOfflineOptions,
} from './license-token.js';
export { API_KEY_SCOPES, JOB_STATUSES, OUTPUT_OPTIONS, TERMINAL_STATUSES } from './types.js';
export type * from './types.js';
export { VERSION } from './version.js';
export { describeMedia } from './media-info.js';
export { parseEventStream } from './event-stream.js';
export type { EventStreamOptions, StreamedEvent } from './event-stream.js';
export type { DescribedMedia } from './media-info.js';
