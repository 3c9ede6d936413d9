// Standard Webhooks signing (https://www.standardwebhooks.com): what a receiver verifies with the
// reference library `standardwebhooks` or the SDK's `webhooks.verify`.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** `whsec_` + base64 of 24 random bytes (192 bits), the form the reference library accepts as is. */
export function generateSecret(): string {
  return `${PREFIX}${randomBytes(24).toString('base64')}`;
}

/** The HMAC key: the base64-decoded part after `whsec_`. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` entry. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three headers of a delivery. Several secrets (during a rotation's overlap) give
 * space-separated entries; the receiver accepts the message if any entry matches its secret.
 */
export function signedHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestamp, body)).join(' '),
  };
}
