// Verifies webhook deliveries per the Standard Webhooks specification (docs/api-decisions.md §6): the signature
// is computed over the raw body, so pass the bytes exactly as received, before any JSON parsing.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { MediaJobsError } from './errors.js';
import type { components } from './generated/openapi.js';

/** Deliveries whose timestamp is further than this from now are refused (replay protection). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** The body of a webhook delivery (the document's `WebhookEvent`). */
export type WebhookEvent = components['schemas']['WebhookEvent'];

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends MediaJobsError {
  constructor(code: string, message: string) {
    super({ type: 'webhook_error', code, message, retryable: false });
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
}

/** The reference signature: base64 HMAC-SHA256 of "id.timestamp.body", keyed by the secret's base64 part. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/**
 * Checks the webhook-id / webhook-timestamp / webhook-signature headers against the endpoint's
 * secret and returns the parsed event; throws WebhookVerificationError when anything is off.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  headers: WebhookHeaders,
  secret: string,
  options: { toleranceSeconds?: number; nowMs?: number } = {},
): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'webhook_headers_missing',
      'Missing webhook-id, webhook-timestamp or webhook-signature header.',
    );
  }
  const seconds = Number(timestamp);
  const nowSeconds = Math.floor((options.nowMs ?? Date.now()) / 1000);
  if (
    !/^\d+$/.test(timestamp) ||
    Math.abs(nowSeconds - seconds) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)
  ) {
    throw new WebhookVerificationError(
      'webhook_timestamp_invalid',
      'The webhook timestamp is missing, malformed or outside the tolerance.',
    );
  }
  const expected = Buffer.from(signWebhook(secret, id, seconds, rawBody).slice('v1,'.length), 'base64');
  // Several space-separated signatures may be present (e.g. during a secret rotation): any v1 match will do.
  const matched = signatures.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matched)
    throw new WebhookVerificationError(
      'webhook_signature_invalid',
      'No webhook signature matches this body and secret.',
    );
  return JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8')) as WebhookEvent;
}

export class Webhooks {
  verify(
    rawBody: string | Buffer,
    headers: WebhookHeaders,
    secret: string,
    options?: { toleranceSeconds?: number; nowMs?: number },
  ): WebhookEvent {
    return verifyWebhook(rawBody, headers, secret, options);
  }
}
