// The client against the fault-injecting server: every row of table 7.11, end to end over HTTP.

import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import {
  AuthError,
  BillingError,
  ConnectionError,
  InvalidRequestError,
  MediaJobs,
  MediaJobsError,
  RateLimitError,
  ResourceError,
  ServerError,
  TimeoutError,
} from '../src/index.js';
import type { MediaJobsOptions, RetryEvent } from '../src/index.js';
import { envelope, jobView, sequence, startFaultServer } from './fault-server.js';
import type { FaultServer, Handler } from './fault-server.js';

let server: FaultServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A client on a fresh fault server whose sleeps are recorded instead of waited out. */
async function setup(handler: Handler, options: Partial<MediaJobsOptions> = {}) {
  server = await startFaultServer(handler);
  const sleeps: number[] = [];
  const retries: RetryEvent[] = [];
  const client = new MediaJobs({
    apiKey: 'mjk_test',
    baseUrl: server.baseUrl,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
    onRetry: (event) => retries.push(event),
    ...options,
  });
  return { client, server, sleeps, retries };
}

async function rejection(promise: Promise<unknown>): Promise<MediaJobsError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof MediaJobsError, `expected a MediaJobsError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

const submit = (client: MediaJobs) =>
  client.sdr2hdr.jobs.create({ inputs: [{ source_url: 'https://example.test/a.mp4' }] });

describe('retryable true with 429, 503 or 504: 3 retries with backoff, then raised', () => {
  for (const [status, type, code, ErrorClass] of [
    [429, 'rate_limit_error', 'concurrency_limit_exceeded', RateLimitError],
    [503, 'rate_limit_error', 'queue_full', RateLimitError],
    [503, 'server_error', 'service_unavailable', ServerError],
    [504, 'server_error', 'internal_error', ServerError],
  ] as const) {
    test(`${status} ${code}`, async () => {
      const { client, server, sleeps, retries } = await setup(sequence(envelope(status, type, code, true)));
      const error = await rejection(submit(client));
      assert.ok(error instanceof ErrorClass);
      assert.equal(error.code, code);
      assert.equal(error.status, status);
      assert.equal(error.attempts, 3);
      assert.equal(server.requests.length, 4, 'the first request and 3 retries');
      assert.deepEqual(sleeps, [250, 500, 1000], 'exponential backoff at its lower bounds (random = 0)');
      assert.deepEqual(
        retries.map((event) => [event.attempt, event.delayMs, event.error.code]),
        [
          [1, 250, code],
          [2, 500, code],
          [3, 1000, code],
        ],
      );
    });
  }

  test('succeeds when a retry gets through, and returns the body', async () => {
    const { client, server } = await setup(
      sequence(envelope(429, 'rate_limit_error', 'rate_limit_exceeded', true), { status: 202, json: jobView() }),
    );
    const job = await submit(client);
    assert.equal(job.job_id, 'job_test1');
    assert.equal(server.requests.length, 2);
  });

  test('the jitter stays within [half, all] of the exponential step', async () => {
    const { client, sleeps } = await setup(sequence(envelope(429, 'rate_limit_error', 'rate_limit_exceeded', true)), {
      random: () => 0.999999,
    });
    await rejection(client.account.credits());
    assert.deepEqual(sleeps, [500, 1000, 2000]);
  });

  test('with the real sleep, the retries are spaced at least by the backoff lower bounds', async () => {
    server = await startFaultServer(sequence(envelope(503, 'server_error', 'maintenance_window', true)));
    const arrivals: number[] = [];
    const started = Date.now();
    const client = new MediaJobs({
      apiKey: 'mjk_test',
      baseUrl: server.baseUrl,
      maxRetries: 2,
      onRetry: () => arrivals.push(Date.now()),
    });
    const error = await rejection(client.account.credits());
    const elapsed = Date.now() - started;
    assert.equal(error.attempts, 2);
    assert.ok(elapsed >= 250 + 500, `waited ${elapsed} ms, expected at least 750 ms`);
    assert.equal(arrivals.length, 2);
  });
});

describe('Retry-After', () => {
  test('is honoured: the delay is at least Retry-After seconds', async () => {
    const { client, server, sleeps } = await setup(
      sequence(
        envelope(429, 'rate_limit_error', 'rate_limit_exceeded', true, {
          headers: { 'retry-after': '2' },
          details: { limit: 5, window_seconds: 1, retry_after_seconds: 2 },
        }),
        { status: 200, json: { object: 'credit_balance', available_credits: 10 } },
      ),
    );
    const balance = await client.account.credits();
    assert.equal(balance.available_credits, 10);
    assert.deepEqual(sleeps, [2000]);
    assert.equal(server.requests.length, 2);
  });

  test('is honoured in real time too (lower bound)', async () => {
    server = await startFaultServer(
      sequence(envelope(503, 'server_error', 'maintenance_window', true, { headers: { 'retry-after': '1' } }), {
        status: 200,
        json: { object: 'credit_balance' },
      }),
    );
    const client = new MediaJobs({ apiKey: 'mjk_test', baseUrl: server.baseUrl });
    const started = Date.now();
    await client.account.credits();
    assert.ok(Date.now() - started >= 1000, 'waited at least the 1 s of Retry-After');
  });

  test('over 60 s is raised at once with attempts 0', async () => {
    const { client, server, sleeps } = await setup(
      sequence(envelope(429, 'rate_limit_error', 'rate_limit_exceeded', true, { headers: { 'retry-after': '120' } })),
    );
    const error = await rejection(submit(client));
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.attempts, 0);
    assert.equal(server.requests.length, 1);
    assert.deepEqual(sleeps, []);
  });
});

describe('retryable true with 500 or 502: 2 retries', () => {
  for (const [status, code] of [
    [500, 'internal_error'],
    [502, 'upstream_error'],
  ] as const) {
    test(`${status} ${code}`, async () => {
      const { client, server, sleeps } = await setup(sequence(envelope(status, 'server_error', code, true)));
      const error = await rejection(submit(client));
      assert.ok(error instanceof ServerError);
      assert.equal(error.attempts, 2);
      assert.equal(server.requests.length, 3);
      assert.deepEqual(sleeps, [250, 500]);
    });
  }

  test('a non-envelope body (a proxy HTML 502) is a ServerError judged by its status', async () => {
    const { client, server } = await setup(
      sequence({
        status: 502,
        body: '<html><body>Bad Gateway</body></html>',
        headers: { 'content-type': 'text/html' },
      }),
    );
    const error = await rejection(client.account.credits());
    assert.ok(error instanceof ServerError);
    assert.equal(error.code, 'http_502');
    assert.equal(error.status, 502);
    assert.equal(error.retryable, true);
    assert.equal(error.attempts, 2);
    assert.equal(error.requestId, 'req_test3');
    assert.match(error.message, /Bad Gateway/);
    assert.equal(server.requests.length, 3);
  });

  test('a non-envelope 4xx is not retried', async () => {
    const { client, server } = await setup(sequence({ status: 404, body: 'not here' }));
    const error = await rejection(client.account.credits());
    assert.equal(error.retryable, false);
    assert.equal(error.status, 404);
    assert.equal(server.requests.length, 1);
  });
});

describe('retryable false: raised at once', () => {
  for (const [status, type, code, ErrorClass] of [
    [402, 'billing_error', 'insufficient_credits', BillingError],
    [400, 'invalid_request_error', 'invalid_parameter', InvalidRequestError],
    [401, 'auth_error', 'invalid_api_key', AuthError],
    [429, 'rate_limit_error', 'quota_exceeded', RateLimitError],
    [409, 'resource_error', 'idempotency_conflict', ResourceError],
  ] as const) {
    test(`${status} ${code}`, async () => {
      const { client, server, sleeps } = await setup(
        sequence(envelope(status, type, code, false, { param: 'inputs', details: { required_credits: 24 } })),
      );
      const error = await rejection(submit(client));
      assert.ok(error instanceof ErrorClass);
      assert.equal(error.attempts, 0);
      assert.equal(server.requests.length, 1);
      assert.deepEqual(sleeps, []);
      assert.equal(error.param, 'inputs');
      assert.deepEqual(error.details, { required_credits: 24 });
    });
  }
});

describe('no response: retried with the same Idempotency-Key', () => {
  test('a dropped connection on POST is retried with the same key, and the job is returned', async () => {
    const { client, server, retries } = await setup(sequence('drop', { status: 202, json: jobView() }));
    const job = await submit(client);
    assert.equal(job.job_id, 'job_test1');
    assert.equal(server.requests.length, 2);
    const [first, second] = server.requests.map((request) => request.headers['idempotency-key']);
    assert.match(String(first), /^[0-9a-f-]{36}$/);
    assert.equal(second, first, 'the server saw the same Idempotency-Key twice');
    assert.ok(retries[0]?.error instanceof ConnectionError);
  });

  test('the caller’s own Idempotency-Key is the one reused', async () => {
    const { client, server } = await setup(sequence('drop', 'drop', { status: 202, json: jobView() }));
    await client.sdr2hdr.jobs.create({ inputs: [{ upload_id: 'upl_1' }] }, { idempotencyKey: 'my-key-1' });
    assert.deepEqual(
      server.requests.map((request) => request.headers['idempotency-key']),
      ['my-key-1', 'my-key-1', 'my-key-1'],
    );
  });

  test('dropped every time: ConnectionError after 2 retries', async () => {
    const { client, server } = await setup(sequence('drop'));
    const error = await rejection(submit(client));
    assert.ok(error instanceof ConnectionError);
    assert.equal(error.code, 'connection_error');
    assert.equal(error.status, null);
    assert.equal(error.attempts, 2);
    assert.equal(new Set(server.requests.map((request) => request.headers['idempotency-key'])).size, 1);
  });

  test('a timeout: TimeoutError after 2 retries, all with the same key', async () => {
    const { client, server } = await setup(sequence('hang'), { timeoutMs: 100 });
    const error = await rejection(submit(client));
    assert.ok(error instanceof TimeoutError);
    assert.ok(error instanceof ConnectionError);
    assert.equal(error.code, 'timeout_error');
    assert.equal(error.attempts, 2);
    assert.equal(server.requests.length, 3);
    assert.equal(new Set(server.requests.map((request) => request.headers['idempotency-key'])).size, 1);
  });

  test('two logical calls get two different keys', async () => {
    const { client, server } = await setup(sequence({ status: 202, json: jobView() }));
    await submit(client);
    await submit(client);
    const keys = server.requests.map((request) => request.headers['idempotency-key']);
    assert.notEqual(keys[0], keys[1]);
  });

  test('GET requests carry no Idempotency-Key', async () => {
    const { client, server } = await setup(sequence({ status: 200, json: jobView() }));
    await client.sdr2hdr.jobs.retrieve('job_test1');
    assert.equal(server.requests[0]?.headers['idempotency-key'], undefined);
  });

  test('an upload from a stream is sent once and not retried (the stream cannot be replayed)', async () => {
    const { Readable } = await import('node:stream');
    const { client, server } = await setup(sequence('drop'));
    const error = await rejection(
      client.uploads.create(Readable.from([Buffer.from('abc')]), { contentType: 'video/mp4' }),
    );
    assert.ok(error instanceof ConnectionError);
    assert.equal(error.attempts, 0);
    assert.equal(server.requests.length, 1);
  });

  test('an upload from bytes is retried with the same key and the same body', async () => {
    const { client, server } = await setup(
      sequence('drop', { status: 201, json: { upload_id: 'upl_1', size_bytes: 3, sha256: 'x', expires_at: 'y' } }),
    );
    const upload = await client.uploads.create(Buffer.from('abc'), { contentType: 'video/mp4' });
    assert.equal(upload.upload_id, 'upl_1');
    assert.deepEqual(
      server.requests.map((request) => [request.body.toString(), request.headers['content-type']]),
      [
        ['abc', 'video/mp4'],
        ['abc', 'video/mp4'],
      ],
    );
  });
});

describe('unknown types and codes', () => {
  test('raise the base MediaJobsError with every field filled', async () => {
    const { client } = await setup(
      sequence(
        envelope(418, 'teapot_error', 'brand_new_code', false, { param: 'output.resolution', details: { a: 1 } }),
      ),
    );
    const error = await rejection(submit(client));
    assert.equal(error.constructor, MediaJobsError);
    assert.deepEqual(
      {
        type: error.type,
        code: error.code,
        message: error.message,
        param: error.param,
        requestId: error.requestId,
        docUrl: error.docUrl,
        retryable: error.retryable,
        details: error.details,
        status: error.status,
        attempts: error.attempts,
      },
      {
        type: 'teapot_error',
        code: 'brand_new_code',
        message: 'Test message for brand_new_code.',
        param: 'output.resolution',
        requestId: 'req_envelope',
        docUrl: 'https://docs.example.test/errors.html#brand_new_code',
        retryable: false,
        details: { a: 1 },
        status: 418,
        attempts: 0,
      },
    );
  });

  test('an unknown code in a known family still gets the family class', async () => {
    const { client } = await setup(sequence(envelope(403, 'auth_error', 'key_from_the_future', false)));
    const error = await rejection(client.account.credits());
    assert.ok(error instanceof AuthError);
    assert.equal(error.code, 'key_from_the_future');
  });

  test('an unknown type marked retryable with 503 is retried like any 503', async () => {
    const { client, server } = await setup(sequence(envelope(503, 'new_family', 'new_code', true)));
    const error = await rejection(client.account.credits());
    assert.equal(error.constructor, MediaJobsError);
    assert.equal(error.attempts, 3);
    assert.equal(server.requests.length, 4);
  });
});

describe('requests', () => {
  test('send the API key, JSON content type and User-Agent; paths and query as documented', async () => {
    const { client, server } = await setup(
      sequence({ status: 200, json: { object: 'list', data: [], has_more: false, next_cursor: null } }),
    );
    await client.audio.jobs.list({ limit: 5, starting_after: 'job_9', status: 'failed' });
    await client.sdr2hdr.jobs.cancel('job_1');
    const [list, cancel] = server.requests;
    assert.equal(list?.method, 'GET');
    assert.equal(list?.path, '/v1/audio/jobs?limit=5&starting_after=job_9&status=failed');
    assert.equal(list?.headers['x-api-key'], 'mjk_test');
    assert.equal(list?.headers['user-agent'], 'mediajobs-node/0.1.0');
    assert.equal(cancel?.method, 'POST');
    assert.equal(cancel?.path, '/v1/sdr2hdr/jobs/job_1/cancel');
    await submit(client);
    const create = server.requests[2];
    assert.equal(create?.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(String(create?.body)), { inputs: [{ source_url: 'https://example.test/a.mp4' }] });
  });

  test('a signed asset link is fetched without the API key, even on the service origin', async () => {
    const { client, server } = await setup(sequence({ status: 200, body: 'bytes' }));
    const link = `${server.baseUrl}/v1/assets/ast_1/content?expires=9999999999&signature=abc`;
    const response = await client.assets.download(link);
    assert.equal(await response.text(), 'bytes');
    assert.equal(server.requests[0]?.path, '/v1/assets/ast_1/content?expires=9999999999&signature=abc');
    assert.equal(server.requests[0]?.headers['x-api-key'], undefined);
  });

  test('an upload without a content type goes as application/octet-stream', async () => {
    const { client, server } = await setup(sequence({ status: 201, json: { object: 'upload', upload_id: 'upl_1' } }));
    await client.uploads.create(Buffer.from('abc'));
    assert.equal(server.requests[0]?.headers['content-type'], 'application/octet-stream');
  });

  test('webhook endpoints and events use the documented paths', async () => {
    const { client, server } = await setup(
      sequence({ status: 200, json: { object: 'list', data: [], has_more: false, next_cursor: null } }),
    );
    await client.webhookEndpoints.create({ url: 'https://example.test/hooks', events: ['job.failed'] });
    await client.webhookEndpoints.list();
    await client.webhookEndpoints.rotateSecret('we_1');
    await client.webhookEndpoints.deliveries('we_1', { limit: 5 });
    await client.webhookEndpoints.delete('we_1');
    await client.events.list({ type: 'job.failed', job_id: 'job_1' });
    await client.events.redeliver('evt_1');
    assert.deepEqual(
      server.requests.map((request) => `${request.method} ${request.path}`),
      [
        'POST /v1/webhook-endpoints',
        'GET /v1/webhook-endpoints',
        'POST /v1/webhook-endpoints/we_1/rotate-secret',
        'GET /v1/webhook-endpoints/we_1/deliveries?limit=5',
        'DELETE /v1/webhook-endpoints/we_1',
        'GET /v1/events?type=job.failed&job_id=job_1',
        'POST /v1/events/evt_1/redeliver',
      ],
    );
  });

  test('licence calls send the token header', async () => {
    const { client, server } = await setup(sequence({ status: 200, json: { plan: 'pro' } }));
    await client.license.retrieve('tok.en.sig');
    assert.equal(server.requests[0]?.path, '/v1/license');
    assert.equal(server.requests[0]?.headers['x-license-token'], 'tok.en.sig');
  });
});

after(async () => {
  await server?.close();
});
