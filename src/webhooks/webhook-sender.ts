// One delivery attempt: sign the stored event body, POST it through the SSRF-safe pinned client
// (the private-address rule checked again, DNS pinned, redirects never followed) and judge the answer.
import type { ConnectFunction } from '../common/net/pinned-connection';
import { pinnedRequest } from '../common/net/pinned-fetch';
import type { AllowList, LookupFunction } from '../common/net/safe-url';
import { parseRetryAfter } from './retry-policy';
import { signedHeaders } from './signature';

/** A receiver has this long to answer with a 2xx (docs/api-decisions.md §6). */
export const DELIVERY_TIMEOUT_MS = 10_000;

export type Verdict = 'delivered' | 'retry' | 'gone';

export interface AttemptResult {
  verdict: Verdict;
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt did not deliver, in words for the delivery log; null when delivered. */
  error: string | null;
  /** The receiver's Retry-After (429/503 only), in seconds. */
  retryAfterSeconds: number | null;
}

export interface DeliveryTarget {
  url: string;
  /** The current secret first, then the pre-rotation one during its overlap. */
  secrets: string[];
  eventId: string;
  body: string;
}

export interface SendOptions {
  allow: AllowList;
  signal?: AbortSignal;
  timeoutMs?: number;
  lookup?: LookupFunction;
  connect?: ConnectFunction;
}

/** What a status means for the delivery: 2xx delivered, 410 disables the endpoint, anything else is retried. */
export function judgeStatus(status: number, retryAfter?: string): Omit<AttemptResult, 'durationMs' | 'statusCode'> {
  if (status >= 200 && status < 300) return { verdict: 'delivered', error: null, retryAfterSeconds: null };
  if (status === 410) {
    return {
      verdict: 'gone',
      error: 'The endpoint answered HTTP 410 Gone; it is now disabled.',
      retryAfterSeconds: null,
    };
  }
  if (status >= 300 && status < 400) {
    return {
      verdict: 'retry',
      error: `The endpoint answered a redirect (HTTP ${status}); redirects are not followed.`,
      retryAfterSeconds: null,
    };
  }
  const retryAfterSeconds = status === 429 || status === 503 ? parseRetryAfter(retryAfter) : null;
  return { verdict: 'retry', error: `The endpoint answered HTTP ${status}.`, retryAfterSeconds };
}

/** Sends one attempt. Never throws for the receiver's failures; throws only when `signal` aborts it. */
export async function sendWebhook(target: DeliveryTarget, options: SendOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const timestamp = Math.floor(Date.now() / 1000);
  const result = await pinnedRequest(target.url, {
    allow: options.allow,
    lookup: options.lookup,
    connect: options.connect,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'mediajobs-webhooks/1',
      ...signedHeaders(target.secrets, target.eventId, timestamp, target.body),
    },
    body: target.body,
    timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    maxRedirects: 0,
    // Every status comes back as a response, so a 3xx is judged (not followed) and Retry-After read.
    acceptStatus: () => true,
    signal: options.signal,
  });
  if (!result.ok) {
    return {
      verdict: 'retry',
      statusCode: result.status ?? null,
      durationMs: elapsed(),
      error: result.reason,
      retryAfterSeconds: null,
    };
  }
  const { response } = result;
  const status = response.statusCode ?? 0;
  const durationMs = elapsed();
  const retryAfter = response.headers['retry-after'];
  // The answer's body is of no interest; dropping the socket is all the cleanup needed (no pooled agent).
  response.destroy();
  return {
    ...judgeStatus(status, typeof retryAfter === 'string' ? retryAfter : undefined),
    statusCode: status,
    durationMs,
  };
}
