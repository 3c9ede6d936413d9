// webhooks.verify against signatures made by the reference Standard Webhooks library (npm standardwebhooks).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { MediaJobs, WebhookVerificationError, signWebhook } from '../src/index.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const body = JSON.stringify({
  id: 'evt_1',
  event: 'job.failed',
  created_at: '2025-01-01T00:00:00Z',
  data: { job: { job_id: 'job_1' }, error: { type: 'processing_error', code: 'processing_failed', message: 'm' } },
});
const client = new MediaJobs({ apiKey: 'mjk_test', baseUrl: 'http://127.0.0.1:9' });

function signed(options: { at?: Date; payload?: string; key?: string } = {}) {
  const at = options.at ?? new Date();
  return {
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(options.key ?? secret).sign('evt_1', at, options.payload ?? body),
  };
}

function verificationCode(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof WebhookVerificationError);
    return error.code;
  }
  assert.fail('expected verification to fail');
}

describe('webhooks.verify', () => {
  test('accepts a delivery signed by the reference library and returns the event', () => {
    const event = client.webhooks.verify(body, signed(), secret);
    assert.equal(event.event, 'job.failed');
    assert.equal(event.data.job?.job_id, 'job_1');
  });

  test('accepts a Buffer body, a Headers object and mixed-case header names', () => {
    const headers = signed();
    assert.ok(client.webhooks.verify(Buffer.from(body), new Headers(headers), secret));
    const mixed = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    assert.ok(client.webhooks.verify(body, mixed, secret));
  });

  test('accepts when any one of several space-separated signatures matches (secret rotation)', () => {
    const headers = signed();
    const old = signed({ key: `whsec_${randomBytes(24).toString('base64')}` });
    headers['webhook-signature'] = `${old['webhook-signature']} v2,ignored ${headers['webhook-signature']}`;
    assert.ok(client.webhooks.verify(body, headers, secret));
  });

  test('our signWebhook matches the reference library byte for byte', () => {
    const at = new Date('2025-01-01T00:00:00Z');
    assert.equal(signWebhook(secret, 'evt_1', at.getTime() / 1000, body), new Webhook(secret).sign('evt_1', at, body));
  });

  test('rejects a tampered body', () => {
    const tampered = body.replace('processing_failed', 'processing_okay');
    assert.equal(
      verificationCode(() => client.webhooks.verify(tampered, signed(), secret)),
      'webhook_signature_invalid',
    );
  });

  test('rejects a timestamp older than 5 minutes, even with a valid signature', () => {
    const old = signed({ at: new Date(Date.now() - 6 * 60 * 1000) });
    assert.equal(
      verificationCode(() => client.webhooks.verify(body, old, secret)),
      'webhook_timestamp_invalid',
    );
    const recent = signed({ at: new Date(Date.now() - 4 * 60 * 1000) });
    assert.ok(client.webhooks.verify(body, recent, secret));
  });

  test('rejects a timestamp that was changed after signing', () => {
    const headers = signed();
    headers['webhook-timestamp'] = String(Number(headers['webhook-timestamp']) - 1);
    assert.equal(
      verificationCode(() => client.webhooks.verify(body, headers, secret)),
      'webhook_signature_invalid',
    );
  });

  test('rejects the wrong secret and missing headers', () => {
    const other = `whsec_${randomBytes(24).toString('base64')}`;
    assert.equal(
      verificationCode(() => client.webhooks.verify(body, signed(), other)),
      'webhook_signature_invalid',
    );
    const { 'webhook-signature': _dropped, ...partial } = signed();
    assert.equal(
      verificationCode(() => client.webhooks.verify(body, partial, secret)),
      'webhook_headers_missing',
    );
  });
});
