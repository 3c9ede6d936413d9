// The error catalogue as data: the specification's 45 codes (section 7) plus the few we added for
// cases it does not cover. Everything that reports an error — HTTP responses, job views, webhooks,
// the errors page, the OpenAPI document — reads this one table.

export const ERROR_TYPES = [
  'auth_error',
  'billing_error',
  'rate_limit_error',
  'invalid_request_error',
  'resource_error',
  'processing_error',
  'server_error',
  'license_error',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

export interface CatalogueEntry {
  type: ErrorType;
  status: number;
  /** Whether an automatic retry is appropriate: the specification's "SDK auto-retry" column. */
  retryable: boolean;
  /** When the code is raised (shown on the errors page). */
  condition: string;
  /** The default `message`: an English sentence on how to recover. */
  message: string;
  /** True for codes we added beyond the specification's 45. */
  added?: true;
}

export const CATALOGUE = {
  // 7.2 auth_error
  missing_api_key: {
    type: 'auth_error',
    status: 401,
    retryable: false,
    condition: 'No X-API-Key header',
    message: 'Send your API key in the X-API-Key header.',
  },
  invalid_api_key: {
    type: 'auth_error',
    status: 401,
    retryable: false,
    condition: 'Key unknown or malformed',
    message: 'Check the API key: it is unknown or malformed. Copy it again from the dashboard.',
  },
  expired_api_key: {
    type: 'auth_error',
    status: 401,
    retryable: false,
    condition: 'Key past expiry',
    message: 'This API key has expired. Create a new key and use it instead.',
  },
  revoked_api_key: {
    type: 'auth_error',
    status: 401,
    retryable: false,
    condition: 'Key revoked',
    message: 'This API key was revoked and stays dead. Create a new key and use it instead.',
  },
  insufficient_scope: {
    type: 'auth_error',
    status: 403,
    retryable: false,
    condition: 'Key scope does not cover this API or project',
    message: 'This API key is not scoped for this API. Use a key with the required scope.',
  },
  account_suspended: {
    type: 'auth_error',
    status: 403,
    retryable: false,
    condition: 'Account suspended',
    message: 'This account is suspended. Contact support to restore access.',
  },

  // 7.3 billing_error
  insufficient_credits: {
    type: 'billing_error',
    status: 402,
    retryable: false,
    condition: "Balance below the job's estimated cost",
    message:
      'Your available credits do not cover the estimated cost of this job. Buy credits, or submit a shorter job.',
  },
  spend_limit_exceeded: {
    type: 'billing_error',
    status: 402,
    retryable: false,
    condition: 'Monthly spend cap reached',
    message: 'This job would pass your monthly spend limit. Raise the limit or wait until it resets.',
  },
  plan_not_supported: {
    type: 'billing_error',
    status: 402,
    retryable: false,
    condition: 'Plan lacks this API, resolution or tier',
    message: 'Your plan does not include this API or output. Upgrade your plan or change the request.',
  },
  payment_failed: {
    type: 'billing_error',
    status: 402,
    retryable: false,
    condition: 'Card declined or expired',
    message: 'Your last payment failed. Update your payment method, then try again.',
  },
  subscription_inactive: {
    type: 'billing_error',
    status: 402,
    retryable: false,
    condition: 'Subscription lapsed',
    message: 'Your subscription is inactive. Renew it to submit jobs.',
  },

  // 7.4 rate_limit_error
  rate_limit_exceeded: {
    type: 'rate_limit_error',
    status: 429,
    retryable: true,
    condition: 'Requests per second above the tier limit',
    message: 'Too many requests. Wait for the number of seconds in Retry-After, then retry.',
  },
  concurrency_limit_exceeded: {
    type: 'rate_limit_error',
    status: 429,
    retryable: true,
    condition: 'More simultaneous jobs than the tier allows',
    message: 'Too many jobs are running at once for your plan. Retry after one finishes.',
  },
  quota_exceeded: {
    type: 'rate_limit_error',
    status: 429,
    retryable: false,
    // One code for every plan quota (details say which): processing minutes per period, bytes held in
    // uploads, webhook endpoints. None frees itself by retrying at once, so retryable stays false. The
    // condition is the specification's own words (catalogue.spec.ts); its "e.g." covers the other two.
    condition: 'Period quota (e.g. monthly processing minutes) used up',
    message: 'Your processing quota for this period is used up. Wait for the period to reset or upgrade your plan.',
  },
  queue_full: {
    type: 'rate_limit_error',
    status: 503,
    retryable: true,
    condition: 'Processing queue saturated',
    message: 'The processing queue is full. Retry with backoff.',
  },

  // 7.5 invalid_request_error
  missing_parameter: {
    type: 'invalid_request_error',
    status: 400,
    retryable: false,
    condition: 'A required field absent (named in param)',
    message: 'A required parameter is missing: add the field named in param.',
  },
  invalid_parameter: {
    type: 'invalid_request_error',
    status: 400,
    retryable: false,
    condition: 'Value out of range or of the wrong type',
    message: 'A parameter has an invalid value: fix the field named in param.',
  },
  invalid_url: {
    type: 'invalid_request_error',
    status: 400,
    retryable: false,
    condition: 'Source URL unreachable or its signature expired',
    message:
      'The source URL cannot be used: it is unreachable, not public, or its signature expired. Send a fresh public http(s) URL.',
  },
  duration_exceeded: {
    type: 'invalid_request_error',
    status: 400,
    retryable: false,
    condition: 'Input longer than the API accepts',
    message: 'The input is longer than this API accepts. Trim it or split it into several inputs.',
  },
  file_too_large: {
    type: 'invalid_request_error',
    status: 413,
    retryable: false,
    condition: 'Payload above the size limit',
    message: 'The file is larger than the upload limit. Send a smaller file.',
  },
  unsupported_format: {
    type: 'invalid_request_error',
    status: 415,
    retryable: false,
    condition: 'Container format unsupported (MP4, MOV, WAV are the formats suggested)',
    message: 'The container format is not supported. Send MP4, MOV, M4A or WAV.',
  },
  unsupported_codec: {
    type: 'invalid_request_error',
    status: 415,
    retryable: false,
    condition: 'Codec inside the container unsupported',
    message: 'A stream uses a codec we do not accept. Re-encode it (for example to H.264 or AAC).',
  },
  invalid_media: {
    type: 'invalid_request_error',
    status: 422,
    retryable: false,
    condition: 'File corrupt or undecodable',
    message: 'The file is corrupt or cannot be decoded. Check the file and upload it again.',
  },
  content_policy_violation: {
    type: 'invalid_request_error',
    status: 422,
    retryable: false,
    condition: 'Content breaches the usage policy',
    message: 'This content is not allowed by the usage policy.',
  },

  // 7.6 resource_error
  job_not_found: {
    type: 'resource_error',
    status: 404,
    retryable: false,
    condition: 'job_id unknown or aged out of retention',
    message: 'No job with this id exists for your account (it may have passed retention).',
  },
  asset_not_found: {
    type: 'resource_error',
    status: 404,
    retryable: false,
    condition: 'Output asset or upload gone',
    message: 'The asset or upload does not exist or has expired.',
  },
  job_not_cancellable: {
    type: 'resource_error',
    status: 409,
    retryable: false,
    condition: 'Job finished or past the cancel window',
    message: 'The job has finished or is past its cancel window, so it cannot be cancelled.',
  },
  idempotency_conflict: {
    type: 'resource_error',
    status: 409,
    retryable: false,
    condition: 'Idempotency-Key reused with a different body',
    message: 'This Idempotency-Key was used with a different request. Use a new key for a new request.',
  },
  resource_locked: {
    type: 'resource_error',
    status: 409,
    retryable: true,
    condition: 'Resource in use by another job',
    message: 'The resource is in use by another request. Retry shortly.',
  },

  // 7.7 processing_error
  processing_failed: {
    type: 'processing_error',
    status: 422,
    retryable: false,
    condition: 'Generic pipeline failure, no more specific cause',
    message: 'Processing failed. Check the input; submitting the same input again is likely to fail again.',
  },
  out_of_memory: {
    type: 'processing_error',
    status: 500,
    retryable: false,
    condition: 'Resolution or duration exceeds worker configuration',
    message: 'The input is too large for the workers (resolution or duration). Send a smaller input.',
  },
  upstream_error: {
    type: 'processing_error',
    status: 502,
    retryable: true,
    condition: 'A dependency failed',
    message: 'A dependency (source host or storage) failed during processing. Retry later.',
  },
  timeout: {
    type: 'processing_error',
    status: 504,
    retryable: true,
    condition: 'Processing exceeded the job time limit',
    message: 'Processing took longer than the job time limit. Retry, or send a shorter input.',
  },
  drm_protected: {
    type: 'processing_error',
    status: 422,
    retryable: false,
    condition: 'Input is DRM-protected',
    message: 'The input is DRM-protected (encrypted) and cannot be processed.',
  },
  no_speech_detected: {
    type: 'processing_error',
    status: 422,
    retryable: false,
    condition: 'No speech found in a subtitle or audio job',
    message: 'No speech was found in the input.',
  },
  output_check_failed: {
    type: 'processing_error',
    status: 500,
    retryable: false,
    // The customer errors page shows the condition: no pointer into our design notes (the checks and
    // their floors are in docs/api-decisions.md §12).
    condition:
      'The output was made but failed one of its own checks (format, frames, duration, picture or loudness); the item is charged 0',
    message:
      'The output did not pass its checks (details: the check, what was expected and what was measured). The item was not charged.',
    added: true,
  },
  job_cancelled: {
    type: 'processing_error',
    status: 409,
    retryable: false,
    condition: 'Job cancelled by the client or the system',
    message: 'The job was cancelled. Stop polling it; submit a new job if you still need the result.',
  },

  // 7.8 server_error
  internal_error: {
    type: 'server_error',
    status: 500,
    retryable: true,
    condition: 'Unexpected exception',
    message: 'Something went wrong on our side. Retry with backoff; quote the request_id if it persists.',
  },
  service_unavailable: {
    type: 'server_error',
    status: 503,
    retryable: true,
    condition: 'Temporarily unavailable',
    message: 'The service is temporarily unavailable. Retry with backoff.',
  },
  maintenance_window: {
    type: 'server_error',
    status: 503,
    retryable: true,
    condition: 'Planned maintenance',
    message: 'The service is in planned maintenance. Retry after the time in Retry-After.',
  },
  region_unavailable: {
    type: 'server_error',
    status: 503,
    retryable: true,
    condition: 'Target region degraded (another region may be tried)',
    message: 'The requested region is degraded. Retry later or choose another region.',
  },

  // 7.9 license_error
  license_invalid: {
    type: 'license_error',
    status: 403,
    retryable: false,
    condition: 'Licence key not recognised',
    message: 'The licence key is not recognised. Check it, or contact the vendor.',
  },
  license_expired: {
    type: 'license_error',
    status: 403,
    retryable: false,
    condition: 'Licence term ended',
    message: 'The licence has expired. Renew it to continue.',
  },
  activation_limit_reached: {
    type: 'license_error',
    status: 403,
    retryable: false,
    condition: "Plan's activated-device count exhausted",
    message: 'All device seats of this licence are in use. Deactivate a device first.',
  },
  device_not_activated: {
    type: 'license_error',
    status: 403,
    retryable: false,
    condition: 'This machine not yet activated',
    message: 'This device is not activated for the licence. Activate it first.',
  },
  offline_grace_expired: {
    type: 'license_error',
    status: 403,
    retryable: true,
    condition: 'Offline grace period ended; online validation due',
    message: 'The offline grace period has ended. Validate online, then retry.',
  },

  // Added beyond the specification (docs/api-decisions.md §1 allows additions for cases the catalogue does not cover).
  route_not_found: {
    type: 'invalid_request_error',
    status: 404,
    retryable: false,
    condition: 'No endpoint at this path',
    message: 'There is no endpoint at this path. Check the URL and the API version prefix.',
    added: true,
  },
  method_not_allowed: {
    type: 'invalid_request_error',
    status: 405,
    retryable: false,
    condition: 'The path exists but not with this HTTP method',
    message: 'This endpoint does not accept this HTTP method. See the Allow header.',
    added: true,
  },
  invalid_json: {
    type: 'invalid_request_error',
    status: 400,
    retryable: false,
    condition: 'The request body is not valid JSON',
    message: 'The request body is not valid JSON. Fix the syntax and send it again.',
    added: true,
  },
  request_too_large: {
    type: 'invalid_request_error',
    status: 413,
    retryable: false,
    condition: 'A JSON request body above the body size limit',
    message: 'The request body is larger than the limit for JSON bodies. Send a smaller body.',
    added: true,
  },
  request_timeout: {
    type: 'invalid_request_error',
    status: 408,
    retryable: true,
    condition:
      'The request body arrived slower than the minimum rate (REQUEST_BODY_MIN_BYTES_PER_SECOND over a window)',
    message:
      'The request body arrived too slowly and the connection was closed. Send it again on a faster or steadier connection.',
    added: true,
  },
  resource_missing: {
    type: 'resource_error',
    status: 404,
    retryable: false,
    condition: 'The object named in the path (API key, account, endpoint, event…) does not exist',
    message: 'No object with this id exists for your account. Check the id in the path.',
    added: true,
  },
  range_not_satisfiable: {
    type: 'invalid_request_error',
    status: 416,
    retryable: false,
    condition: 'The Range header asks for bytes outside the file',
    message: 'The requested byte range lies outside the file. Check the size and ask for a range inside it.',
    added: true,
  },
  unsupported_content_type: {
    type: 'invalid_request_error',
    status: 415,
    retryable: false,
    condition: 'Request Content-Type not accepted by this endpoint',
    message: 'This endpoint does not accept this Content-Type. Send application/json.',
    added: true,
  },
  // The dashboard's credential: a signed-in member's session (cookie), not an API key.
  invalid_credentials: {
    type: 'auth_error',
    status: 401,
    retryable: false,
    condition: 'Sign-in with an email and password that do not match a member',
    message: 'The email or password is not right. Check both, or ask for a password reset link.',
    added: true,
  },
  invalid_session: {
    type: 'auth_error',
    status: 401,
    retryable: false,
    condition: 'Session cookie unknown, signed out, revoked or past its idle or absolute expiry',
    message: 'Your dashboard session has ended. Sign in again.',
    added: true,
  },
  csrf_check_failed: {
    type: 'auth_error',
    status: 403,
    retryable: false,
    condition: 'A change made with a session lacks the X-CSRF-Token of that session, or comes from another origin',
    message:
      'This request was refused as a possible cross-site request: send the X-CSRF-Token of your session from the dashboard itself. Reload the page and try again.',
    added: true,
  },
  // A source_url is fetched twice (probed at submit, downloaded by the worker); the spec has no code
  // for a source whose second answer is not what was checked and priced.
  source_changed: {
    type: 'processing_error',
    status: 422,
    retryable: false,
    condition:
      'A source_url answered the worker with media longer, or with a larger picture, than it answered at submit, when it was checked and priced',
    message:
      'The source changed after submit: it is longer or larger than what was checked and priced, so it was not processed and you were not charged. Submit the job again to have the source checked and priced as it is now.',
    added: true,
  },
  // GET /v1/events/stream: a resume point (Last-Event-ID) older than the events kept, and a cap on
  // open streams per account (a plan limit, like concurrent jobs).
  resume_point_expired: {
    type: 'invalid_request_error',
    status: 410,
    retryable: false,
    condition:
      'The event named in Last-Event-ID is older than the events kept (JOB_RETENTION_DAYS), so events after it may be gone',
    message:
      'The event you asked to resume after is older than the events we keep, so some events after it may be gone. Reconnect without Last-Event-ID, and read GET /v1/events for the events you may have missed.',
    added: true,
  },
  stream_limit_exceeded: {
    type: 'rate_limit_error',
    status: 429,
    retryable: true,
    condition: "More open event streams than the account's plan allows",
    message:
      'Your account has as many event streams open as its plan allows. Close one (or wait for one to end), then connect again.',
    added: true,
  },
  // POST /v1/webhook-endpoints: one URL with one event filter is one endpoint — a copy would only send every
  // event to the same receiver again (issue 29 item 5).
  webhook_endpoint_exists: {
    type: 'invalid_request_error',
    status: 409,
    retryable: false,
    condition: 'A webhook endpoint with the same URL and the same events already exists in the account',
    message:
      'An endpoint with this URL and these events already exists (details.endpoint_id). Use it, or delete it first; to rotate its secret, POST /v1/webhook-endpoints/{id}/rotate-secret.',
    added: true,
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof CATALOGUE;

export const ERROR_CODES = Object.keys(CATALOGUE) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(CATALOGUE, value);
}
