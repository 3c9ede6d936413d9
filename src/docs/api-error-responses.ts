import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { CATALOGUE, type ErrorCode } from '../common/errors/catalogue';
import { docUrlFor } from '../common/errors/api-error';

/** Groups of error codes an endpoint can answer, documented with the envelope schema and examples. */
const GROUPS = {
  auth: ['missing_api_key', 'invalid_api_key', 'expired_api_key', 'revoked_api_key', 'insufficient_scope', 'account_suspended'],
  admin: ['missing_api_key', 'invalid_api_key'],
  rate: ['rate_limit_exceeded'],
  invalid: ['missing_parameter', 'invalid_parameter', 'invalid_json', 'request_too_large', 'unsupported_content_type'],
  missing: ['resource_missing'],
  job_missing: ['job_not_found'],
  submit: [
    'plan_not_supported', 'subscription_inactive', 'payment_failed', 'insufficient_credits', 'spend_limit_exceeded',
    'quota_exceeded', 'concurrency_limit_exceeded', 'queue_full', 'invalid_url', 'duration_exceeded',
    'unsupported_format', 'unsupported_codec', 'invalid_media', 'content_policy_violation', 'idempotency_conflict',
    'resource_locked', 'region_unavailable', 'asset_not_found',
  ],
  cancel: ['job_not_cancellable'],
  upload: ['file_too_large', 'content_policy_violation'],
  license: ['license_invalid', 'license_expired', 'activation_limit_reached', 'device_not_activated', 'offline_grace_expired'],
} satisfies Record<string, ErrorCode[]>;
export type ErrorGroup = keyof typeof GROUPS;

/** Every endpoint can also answer these. */
const ALWAYS: ErrorCode[] = ['internal_error', 'service_unavailable', 'maintenance_window'];

export const EXAMPLE_DOCS_URL = 'https://api.mediajobs.example/docs';

export function exampleError(code: ErrorCode) {
  const row = CATALOGUE[code];
  return {
    error: {
      type: row.type,
      code,
      message: row.message,
      param: null,
      request_id: 'req_0AbCdEfGh1234567890abcd',
      doc_url: docUrlFor(EXAMPLE_DOCS_URL, code),
      retryable: row.retryable,
    },
  };
}

export function ApiErrorResponses(...groups: ErrorGroup[]) {
  const codes = [...new Set([...groups.flatMap((group) => GROUPS[group] as ErrorCode[]), ...ALWAYS])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return applyDecorators(
    ...[...byStatus.entries()].map(([status, statusCodes]) =>
      ApiResponse({
        status,
        description: `Error envelope; code one of: ${statusCodes.join(', ')}`,
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/ErrorEnvelope' },
            examples: Object.fromEntries(statusCodes.map((code) => [code, { summary: code, value: exampleError(code) }])),
          },
        },
      }),
    ),
  );
}
