// Error responses in the OpenAPI document: every one is the ErrorEnvelope schema with one named
// example per catalogue code the endpoint can answer, grouped by HTTP status.
import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type ResponseObject, type ResponsesObject } from '@nestjs/swagger';
import { CATALOGUE, type ErrorCode } from '../errors/catalogue';
import { docUrlFor } from '../errors/api-error';
import { ERROR_DETAILS } from './error-details';

/** Groups of error codes an endpoint can answer, documented with the envelope schema and examples. */
const GROUPS = {
  auth: [
    'missing_api_key',
    'invalid_api_key',
    'expired_api_key',
    'revoked_api_key',
    'insufficient_scope',
    'account_suspended',
  ],
  admin: ['missing_api_key', 'invalid_api_key'],
  // A dashboard session in place of a key (any route a key reaches, and the members-only ones).
  // invalid_parameter: two session cookies in one request (param Cookie).
  session: ['invalid_session', 'csrf_check_failed', 'insufficient_scope', 'account_suspended', 'invalid_parameter'],
  sign_in: ['invalid_credentials', 'csrf_check_failed', 'rate_limit_exceeded'],
  rate: ['rate_limit_exceeded'],
  maintenance: ['maintenance_window'],
  invalid: [
    'missing_parameter',
    'invalid_parameter',
    'invalid_json',
    'request_too_large',
    'unsupported_content_type',
    'request_timeout',
  ],
  missing: ['resource_missing'],
  job_missing: ['job_not_found'],
  asset: ['asset_not_found', 'range_not_satisfiable'],
  submit: [
    'plan_not_supported',
    'subscription_inactive',
    'payment_failed',
    'insufficient_credits',
    'spend_limit_exceeded',
    'quota_exceeded',
    'concurrency_limit_exceeded',
    'queue_full',
    'invalid_url',
    'duration_exceeded',
    'file_too_large',
    'unsupported_format',
    'unsupported_codec',
    'invalid_media',
    'content_policy_violation',
    'idempotency_conflict',
    'resource_locked',
    'region_unavailable',
    'asset_not_found',
  ],
  // The submit's checks up to step 7; limits and money answer 200 with accepted:false instead.
  estimate: [
    'plan_not_supported',
    'subscription_inactive',
    'payment_failed',
    'invalid_url',
    'duration_exceeded',
    'file_too_large',
    'unsupported_format',
    'unsupported_codec',
    'invalid_media',
    'content_policy_violation',
    'idempotency_conflict',
    'resource_locked',
    'region_unavailable',
    'asset_not_found',
  ],
  cancel: ['job_not_cancellable'],
  // GET /v1/events/stream: a Last-Event-ID that names no event, or one older than the events kept; the plan's cap.
  event_stream: ['invalid_parameter', 'resume_point_expired', 'stream_limit_exceeded'],
  // POST /v1/webhook-endpoints: the URL rule, one endpoint per URL and filter, the plan's endpoints.
  webhook_url: ['invalid_url', 'webhook_endpoint_exists', 'quota_exceeded'],
  // An empty body is missing_parameter; an Idempotency-Key reused with other bytes (or still in flight)
  // answers as on every POST (issue 12 item 14).
  upload: [
    'missing_parameter',
    'quota_exceeded',
    'file_too_large',
    'content_policy_violation',
    'unsupported_content_type',
    'request_timeout',
    'idempotency_conflict',
    'resource_locked',
  ],
  license: [
    'license_invalid',
    'license_expired',
    'activation_limit_reached',
    'device_not_activated',
    'offline_grace_expired',
  ],
} satisfies Record<string, ErrorCode[]>;
export type ErrorGroup = keyof typeof GROUPS;

/**
 * Every endpoint can also answer these: a URL that does not decode or carries a value that cannot be
 * stored (U+0000) is refused as invalid_parameter before any route's own checks.
 */
export const ALWAYS: readonly ErrorCode[] = ['invalid_parameter', 'internal_error', 'service_unavailable'];

/** Placeholder host of the examples' doc_url; the served document swaps in the real DOCS_URL. */
export const EXAMPLE_DOCS_URL = 'https://api.mediajobs.example/docs';
export const ERROR_ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';

const EXAMPLE_PARAMS: Partial<Record<ErrorCode, string>> = {
  missing_parameter: 'inputs[0].source_url',
  invalid_parameter: 'output.resolution',
  invalid_url: 'inputs[0].source_url',
};

export function exampleError(code: ErrorCode, docsUrl = EXAMPLE_DOCS_URL) {
  const row = CATALOGUE[code];
  const details = ERROR_DETAILS[code]?.example;
  return {
    error: {
      type: row.type,
      code,
      message: row.message,
      param: EXAMPLE_PARAMS[code] ?? null,
      request_id: 'req_0AbCdEfGh1234567890abcd',
      doc_url: docUrlFor(docsUrl, code),
      retryable: row.retryable,
      ...(details ? { details } : {}),
    },
  };
}

export function groupCodes(groups: readonly ErrorGroup[]): ErrorCode[] {
  return [...new Set(groups.flatMap((group) => GROUPS[group] as ErrorCode[]))];
}

function describe(codes: readonly string[]): string {
  return `Error envelope; \`code\` one of: ${codes.join(', ')}`;
}

/** One response object per HTTP status: the envelope schema, one named example per code. */
export function errorResponses(codes: readonly ErrorCode[]): Map<number, ResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses = new Map<number, ResponseObject>();
  for (const [status, statusCodes] of byStatus) {
    responses.set(status, {
      description: describe(statusCodes),
      content: {
        'application/json': {
          schema: { $ref: ERROR_ENVELOPE_REF },
          examples: Object.fromEntries(statusCodes.map((code) => [code, { summary: code, value: exampleError(code) }])),
        },
      },
    });
  }
  return responses;
}

/**
 * Adds codes to an operation's responses: new statuses get an envelope response, existing envelope
 * responses get the missing examples. Used for the codes implied by a route's access rule, so a
 * controller declares only what is particular to it.
 */
export function mergeErrorResponses(responses: ResponsesObject, codes: readonly ErrorCode[]): void {
  for (const [status, addition] of errorResponses(codes)) {
    const key = String(status);
    const existing = responses[key];
    if (!existing) {
      responses[key] = addition;
      continue;
    }
    if ('$ref' in existing) continue;
    const media = existing.content?.['application/json'];
    const schema = media?.schema as { $ref?: string } | undefined;
    if (!media || schema?.$ref !== ERROR_ENVELOPE_REF) continue;
    media.examples = { ...addition.content!['application/json'].examples, ...media.examples };
    existing.description = describe(Object.keys(media.examples));
  }
}

/** Documents the error responses of an endpoint (the codes of the groups, plus those of ALWAYS). */
export function ApiErrorResponses(...groups: ErrorGroup[]) {
  const responses = errorResponses([...groupCodes(groups), ...ALWAYS]);
  return applyDecorators(...[...responses].map(([status, response]) => ApiResponse({ status, ...response })));
}
