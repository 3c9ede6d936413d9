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

const entry = (
  type: ErrorType,
  status: number,
  retryable: boolean,
  condition: string,
  message: string,
  added?: true,
): CatalogueEntry =>
  added ? { type, status, retryable, condition, message, added } : { type, status, retryable, condition, message };

export const CATALOGUE = {
  // 7.2 auth_error
  missing_api_key: entry('auth_error', 401, false, 'No X-API-Key header', 'Send your API key in the X-API-Key header.'),
  invalid_api_key: entry(
    'auth_error',
    401,
    false,
    'Key unknown or malformed',
    'Check the API key: it is unknown or malformed. Copy it again from the dashboard.',
  ),
  expired_api_key: entry(
    'auth_error',
    401,
    false,
    'Key past expiry',
    'This API key has expired. Create a new key and use it instead.',
  ),
  revoked_api_key: entry(
    'auth_error',
    401,
    false,
    'Key revoked',
    'This API key was revoked and stays dead. Create a new key and use it instead.',
  ),
  insufficient_scope: entry(
    'auth_error',
    403,
    false,
    'Key scope does not cover this API or project',
    'This API key is not scoped for this API. Use a key with the required scope.',
  ),
  account_suspended: entry(
    'auth_error',
    403,
    false,
    'Account suspended',
    'This account is suspended. Contact support to restore access.',
  ),

  // 7.3 billing_error
  insufficient_credits: entry(
    'billing_error',
    402,
    false,
    "Balance below the job's estimated cost",
    'Your available credits do not cover the estimated cost of this job. Buy credits, or submit a shorter job.',
  ),
  spend_limit_exceeded: entry(
    'billing_error',
    402,
    false,
    'Monthly spend cap reached',
    'This job would pass your monthly spend limit. Raise the limit or wait until it resets.',
  ),
  plan_not_supported: entry(
    'billing_error',
    402,
    false,
    'Plan lacks this API, resolution or tier',
    'Your plan does not include this API or output. Upgrade your plan or change the request.',
  ),
  payment_failed: entry(
    'billing_error',
    402,
    false,
    'Card declined or expired',
    'Your last payment failed. Update your payment method, then try again.',
  ),
  subscription_inactive: entry(
    'billing_error',
    402,
    false,
    'Subscription lapsed',
    'Your subscription is inactive. Renew it to submit jobs.',
  ),

  // 7.4 rate_limit_error
  rate_limit_exceeded: entry(
    'rate_limit_error',
    429,
    true,
    'Requests per second above the tier limit',
    'Too many requests. Wait for the number of seconds in Retry-After, then retry.',
  ),
  concurrency_limit_exceeded: entry(
    'rate_limit_error',
    429,
    true,
    'More simultaneous jobs than the tier allows',
    'Too many jobs are running at once for your plan. Retry after one finishes.',
  ),
  quota_exceeded: entry(
    'rate_limit_error',
    429,
    false,
    'Period quota (e.g. monthly processing minutes) used up',
    'Your processing quota for this period is used up. Wait for the period to reset or upgrade your plan.',
  ),
  queue_full: entry(
    'rate_limit_error',
    503,
    true,
    'Processing queue saturated',
    'The processing queue is full. Retry with backoff.',
  ),

  // 7.5 invalid_request_error
  missing_parameter: entry(
    'invalid_request_error',
    400,
    false,
    'A required field absent (named in param)',
    'A required parameter is missing: add the field named in param.',
  ),
  invalid_parameter: entry(
    'invalid_request_error',
    400,
    false,
    'Value out of range or of the wrong type',
    'A parameter has an invalid value: fix the field named in param.',
  ),
  invalid_url: entry(
    'invalid_request_error',
    400,
    false,
    'Source URL unreachable or its signature expired',
    'The source URL cannot be used: it is unreachable, not public, or its signature expired. Send a fresh public http(s) URL.',
  ),
  duration_exceeded: entry(
    'invalid_request_error',
    400,
    false,
    'Input longer than the API accepts',
    'The input is longer than this API accepts. Trim it or split it into several inputs.',
  ),
  file_too_large: entry(
    'invalid_request_error',
    413,
    false,
    'Payload above the size limit',
    'The file is larger than the upload limit. Send a smaller file.',
  ),
  unsupported_format: entry(
    'invalid_request_error',
    415,
    false,
    'Container format unsupported (MP4, MOV, WAV are the formats suggested)',
    'The container format is not supported. Send MP4, MOV, M4A or WAV.',
  ),
  unsupported_codec: entry(
    'invalid_request_error',
    415,
    false,
    'Codec inside the container unsupported',
    'A stream uses a codec we do not accept. Re-encode it (for example to H.264 or AAC).',
  ),
  invalid_media: entry(
    'invalid_request_error',
    422,
    false,
    'File corrupt or undecodable',
    'The file is corrupt or cannot be decoded. Check the file and upload it again.',
  ),
  content_policy_violation: entry(
    'invalid_request_error',
    422,
    false,
    'Content breaches the usage policy',
    'This content is not allowed by the usage policy.',
  ),

  // 7.6 resource_error
  job_not_found: entry(
    'resource_error',
    404,
    false,
    'job_id unknown or aged out of retention',
    'No job with this id exists for your account (it may have passed retention).',
  ),
  asset_not_found: entry(
    'resource_error',
    404,
    false,
    'Output asset or upload gone',
    'The asset or upload does not exist or has expired.',
  ),
  job_not_cancellable: entry(
    'resource_error',
    409,
    false,
    'Job finished or past the cancel window',
    'The job has finished or is past its cancel window, so it cannot be cancelled.',
  ),
  idempotency_conflict: entry(
    'resource_error',
    409,
    false,
    'Idempotency-Key reused with a different body',
    'This Idempotency-Key was used with a different request. Use a new key for a new request.',
  ),
  resource_locked: entry(
    'resource_error',
    409,
    true,
    'Resource in use by another job',
    'The resource is in use by another request. Retry shortly.',
  ),

  // 7.7 processing_error
  processing_failed: entry(
    'processing_error',
    422,
    false,
    'Generic pipeline failure, no more specific cause',
    'Processing failed. Check the input; submitting the same input again is likely to fail again.',
  ),
  out_of_memory: entry(
    'processing_error',
    500,
    false,
    'Resolution or duration exceeds worker configuration',
    'The input is too large for the workers (resolution or duration). Send a smaller input.',
  ),
  upstream_error: entry(
    'processing_error',
    502,
    true,
    'A dependency failed',
    'A dependency (source host or storage) failed during processing. Retry later.',
  ),
  timeout: entry(
    'processing_error',
    504,
    true,
    'Processing exceeded the job time limit',
    'Processing took longer than the job time limit. Retry, or send a shorter input.',
  ),
  drm_protected: entry(
    'processing_error',
    422,
    false,
    'Input is DRM-protected',
    'The input is DRM-protected (encrypted) and cannot be processed.',
  ),
  no_speech_detected: entry(
    'processing_error',
    422,
    false,
    'No speech found in a subtitle or audio job',
    'No speech was found in the input.',
  ),
  job_cancelled: entry(
    'processing_error',
    409,
    false,
    'Job cancelled by the client or the system',
    'The job was cancelled. Stop polling it; submit a new job if you still need the result.',
  ),

  // 7.8 server_error
  internal_error: entry(
    'server_error',
    500,
    true,
    'Unexpected exception',
    'Something went wrong on our side. Retry with backoff; quote the request_id if it persists.',
  ),
  service_unavailable: entry(
    'server_error',
    503,
    true,
    'Temporarily unavailable',
    'The service is temporarily unavailable. Retry with backoff.',
  ),
  maintenance_window: entry(
    'server_error',
    503,
    true,
    'Planned maintenance',
    'The service is in planned maintenance. Retry after the time in Retry-After.',
  ),
  region_unavailable: entry(
    'server_error',
    503,
    true,
    'Target region degraded (another region may be tried)',
    'The requested region is degraded. Retry later or choose another region.',
  ),

  // 7.9 license_error
  license_invalid: entry(
    'license_error',
    403,
    false,
    'Licence key not recognised',
    'The licence key is not recognised. Check it, or contact the vendor.',
  ),
  license_expired: entry(
    'license_error',
    403,
    false,
    'Licence term ended',
    'The licence has expired. Renew it to continue.',
  ),
  activation_limit_reached: entry(
    'license_error',
    403,
    false,
    "Plan's activated-device count exhausted",
    'All device seats of this licence are in use. Deactivate a device first.',
  ),
  device_not_activated: entry(
    'license_error',
    403,
    false,
    'This machine not yet activated',
    'This device is not activated for the licence. Activate it first.',
  ),
  offline_grace_expired: entry(
    'license_error',
    403,
    true,
    'Offline grace period ended; online validation due',
    'The offline grace period has ended. Validate online, then retry.',
  ),

  // Added beyond the specification (docs/api-decisions.md §1 allows additions for cases the catalogue does not cover).
  route_not_found: entry(
    'invalid_request_error',
    404,
    false,
    'No endpoint at this path',
    'There is no endpoint at this path. Check the URL and the API version prefix.',
    true,
  ),
  method_not_allowed: entry(
    'invalid_request_error',
    405,
    false,
    'The path exists but not with this HTTP method',
    'This endpoint does not accept this HTTP method. See the Allow header.',
    true,
  ),
  invalid_json: entry(
    'invalid_request_error',
    400,
    false,
    'The request body is not valid JSON',
    'The request body is not valid JSON. Fix the syntax and send it again.',
    true,
  ),
  request_too_large: entry(
    'invalid_request_error',
    413,
    false,
    'A JSON request body above the body size limit',
    'The request body is larger than the limit for JSON bodies. Send a smaller body.',
    true,
  ),
  request_timeout: entry(
    'invalid_request_error',
    408,
    true,
    'The request body arrived slower than the minimum rate (REQUEST_BODY_MIN_BYTES_PER_SECOND over a window)',
    'The request body arrived too slowly and the connection was closed. Send it again on a faster or steadier connection.',
    true,
  ),
  resource_missing: entry(
    'resource_error',
    404,
    false,
    'The object named in the path (API key, account, endpoint, event…) does not exist',
    'No object with this id exists for your account. Check the id in the path.',
    true,
  ),
  range_not_satisfiable: entry(
    'invalid_request_error',
    416,
    false,
    'The Range header asks for bytes outside the file',
    'The requested byte range lies outside the file. Check the size and ask for a range inside it.',
    true,
  ),
  unsupported_content_type: entry(
    'invalid_request_error',
    415,
    false,
    'Request Content-Type not accepted by this endpoint',
    'This endpoint does not accept this Content-Type. Send application/json.',
    true,
  ),
  // The dashboard's credential: a signed-in member's session (cookie), not an API key.
  invalid_credentials: entry(
    'auth_error',
    401,
    false,
    'Sign-in with an email and password that do not match a member',
    'The email or password is not right. Check both, or ask for a password reset link.',
    true,
  ),
  invalid_session: entry(
    'auth_error',
    401,
    false,
    'Session cookie unknown, signed out, revoked or past its idle or absolute expiry',
    'Your dashboard session has ended. Sign in again.',
    true,
  ),
  csrf_check_failed: entry(
    'auth_error',
    403,
    false,
    'A change made with a session lacks the X-CSRF-Token of that session, or comes from another origin',
    'This request was refused as a possible cross-site request: send the X-CSRF-Token of your session from the dashboard itself. Reload the page and try again.',
    true,
  ),
  // A source_url is fetched twice (probed at submit, downloaded by the worker); the spec has no code
  // for a source whose second answer is not what was checked and priced.
  source_changed: entry(
    'processing_error',
    422,
    false,
    'A source_url answered the worker with media longer, or with a larger picture, than it answered at submit, when it was checked and priced',
    'The source changed after submit: it is longer or larger than what was checked and priced, so it was not processed and you were not charged. Submit the job again to have the source checked and priced as it is now.',
    true,
  ),
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof CATALOGUE;

export const ERROR_CODES = Object.keys(CATALOGUE) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(CATALOGUE, value);
}
