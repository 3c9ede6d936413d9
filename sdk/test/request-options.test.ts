// Per-request options, withResponse(), the logger hook, the retry stop reason and auto-pagination,
// against the scripted server (the real service runs the same calls in test/sdk/sdk.e2e-spec.ts).

import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { MediaJobs, MediaJobsError, RETRY_STOP_REASONS, TimeoutError } from '../src/index.js';
import type { MediaJobsOptions } from '../src/index.js';
import { envelope, jobView, sequence, startFaultServer } from './fault-server.js';
import type { FaultServer, Handler } from './fault-server.js';

let server: FaultServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(handler: Handler, options: Partial<MediaJobsOptions> = {}) {
  server = await startFaultServer(handler);
  const sleeps: number[] = [];
  const client = new MediaJobs({
    apiKey: 'mjk_test',
    baseUrl: server.baseUrl,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
    ...options,
  });
  return { client, server, sleeps };
}

async function rejection(promise: PromiseLike<unknown>): Promise<MediaJobsError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof MediaJobsError, `expected a MediaJobsError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

const submit = (client: MediaJobs, options = {}) =>
  client.sdr2hdr.jobs.create({ inputs: [{ source_url: 'https://example.test/a.mp4' }] }, options);

describe('the retry stop reason on a raised error', () => {
  test('retryable false: not_retryable, no retry', async () => {
    const { client } = await setup(sequence(envelope(402, 'billing_error', 'insufficient_credits', false)));
    const error = await rejection(submit(client));
    assert.equal(error.retryStopReason, 'not_retryable');
    assert.equal(RETRY_STOP_REASONS[error.retryStopReason], 'not retryable');
    assert.equal(error.attempts, 0);
  });

  test('Retry-After beyond 60 s: retry_after_too_long, raised at once', async () => {
    const { client, server } = await setup(
      sequence(envelope(503, 'server_error', 'maintenance_window', true, { headers: { 'retry-after': '600' } })),
    );
    const error = await rejection(submit(client));
    assert.equal(error.retryStopReason, 'retry_after_too_long');
    assert.equal(RETRY_STOP_REASONS[error.retryStopReason], 'Retry-After too long');
    assert.equal(server.requests.length, 1);
  });

  test('the table’s cap used up: retries_exhausted after 3 retries', async () => {
    const { client, server } = await setup(sequence(envelope(503, 'server_error', 'service_unavailable', true)));
    const error = await rejection(submit(client));
    assert.equal(error.retryStopReason, 'retries_exhausted');
    assert.equal(error.attempts, 3);
    assert.equal(server.requests.length, 4);
  });

  test('retryable, but no retry for its status: status_not_retried', async () => {
    const { client } = await setup(sequence(envelope(403, 'license_error', 'offline_grace_expired', true)));
    assert.equal((await rejection(submit(client))).retryStopReason, 'status_not_retried');
  });

  test('offline_grace_expired on license.retrieve with revalidate: validate online once, then the retry with the fresh token', async () => {
    const { client, server } = await setup(
      sequence(
        envelope(403, 'license_error', 'offline_grace_expired', true),
        {
          status: 200,
          json: { activation_id: 'act_1', token: 'fresh.token.sig', license: {}, offline_grace_until: '' },
        },
        { status: 200, json: { object: 'license', id: 'lic_1' } },
      ),
    );
    const renewed: string[] = [];
    const { data, response } = await client.license
      .retrieve('old.token.sig', {
        revalidate: {
          license_key: 'mjl_x',
          device_id: 'd1',
          onValidated: (activation) => renewed.push(activation.token),
        },
      })
      .withResponse();
    assert.deepEqual(data, { object: 'license', id: 'lic_1' });
    assert.deepEqual(renewed, ['fresh.token.sig']);
    assert.equal(response.retries, 1);
    assert.deepEqual(
      server.requests.map(
        (request) => `${request.method} ${request.path} ${String(request.headers['x-license-token'] ?? '')}`,
      ),
      ['GET /v1/license old.token.sig', 'POST /v1/license/validate ', 'GET /v1/license fresh.token.sig'],
    );
    assert.deepEqual(JSON.parse(server.requests[1]!.body.toString()), { license_key: 'mjl_x', device_id: 'd1' });
  });

  test('offline_grace_expired on license.retrieve without revalidate: raised at once (the same token would fail again)', async () => {
    const { client, server } = await setup(sequence(envelope(403, 'license_error', 'offline_grace_expired', true)));
    const error = await rejection(client.license.retrieve('old.token.sig'));
    assert.equal(error.code, 'offline_grace_expired');
    assert.equal(server.requests.length, 1);
  });
});

describe('per-request options', () => {
  test('maxRetries: 0 on one call raises the first failure; the next call keeps the client’s policy', async () => {
    const { client, server } = await setup(sequence(envelope(503, 'server_error', 'service_unavailable', true)));
    const error = await rejection(submit(client, { maxRetries: 0 }));
    assert.equal(error.retryStopReason, 'retries_exhausted');
    assert.equal(server.requests.length, 1);
    await rejection(submit(client));
    assert.equal(server.requests.length, 1 + 4);
  });

  test('maxRetries never raises the table’s cap', async () => {
    const { client, server } = await setup(sequence(envelope(500, 'server_error', 'internal_error', true)));
    await rejection(submit(client, { maxRetries: 10 }));
    assert.equal(server.requests.length, 1 + 2, '500: at most 2 retries whatever the caller asks');
  });

  test('timeoutMs on one call: a hanging server raises TimeoutError for that call', async () => {
    const { client } = await setup(sequence('hang'), { timeoutMs: 60_000 });
    const started = Date.now();
    const error = await rejection(client.sdr2hdr.jobs.retrieve('job_x', { timeoutMs: 100, maxRetries: 0 }));
    assert.ok(error instanceof TimeoutError);
    assert.match(error.message, /within 100 ms/);
    assert.ok(Date.now() - started < 30_000);
  });
});

describe('withResponse()', () => {
  test('status, headers, request id, rate-limit headers, replay flag and retries, beside the body', async () => {
    const { client } = await setup(
      sequence('drop', {
        status: 202,
        json: jobView(),
        headers: {
          'x-ratelimit-limit': '100',
          'x-ratelimit-remaining': '97',
          'x-ratelimit-reset': '1',
          'idempotent-replayed': 'true',
          location: '/v1/sdr2hdr/jobs/job_test1',
        },
      }),
    );
    const { data, response } = await submit(client).withResponse();
    assert.equal(data.job_id, 'job_test1');
    assert.equal(response.status, 202);
    assert.equal(response.requestId, 'req_test2');
    assert.deepEqual(response.rateLimit, { limit: 100, remaining: 97, resetSeconds: 1 });
    assert.equal(response.idempotentReplayed, true);
    assert.equal(response.retries, 1);
    assert.equal(response.headers.get('location'), '/v1/sdr2hdr/jobs/job_test1');
    // Awaited as usual, the same call gives the body alone.
    assert.equal((await client.sdr2hdr.jobs.retrieve('job_test1')).job_id, 'job_test1');
  });
});

describe('the logger hook', () => {
  test('debug per exchange, warn per retry; never the key', async () => {
    const lines: [string, string, Record<string, unknown>][] = [];
    const { client } = await setup(
      sequence(envelope(503, 'server_error', 'service_unavailable', true), { status: 202, json: jobView() }),
      {
        logger: {
          debug: (message, fields) => lines.push(['debug', message, fields]),
          warn: (message, fields) => lines.push(['warn', message, fields]),
        },
      },
    );
    await submit(client);
    assert.deepEqual(
      lines.map(([level, message, fields]) => [level, message, fields.status, fields.path]),
      [
        ['debug', 'mediajobs response', 503, '/v1/sdr2hdr/jobs'],
        ['warn', 'mediajobs retrying', 503, '/v1/sdr2hdr/jobs'],
        ['debug', 'mediajobs response', 202, '/v1/sdr2hdr/jobs'],
      ],
    );
    assert.equal(lines[0]?.[2].request_id, 'req_test1');
    assert.equal(typeof lines[0]?.[2].ms, 'number');
    assert.ok(!JSON.stringify(lines).includes('mjk_test'));
  });
});

describe('auto-pagination', () => {
  // Seven jobs served in pages of `limit` after `starting_after`, as the service pages.
  const ids = Array.from({ length: 7 }, (_, index) => `job_${index}`);
  const pages: Handler = (request) => {
    const url = new URL(request.path, 'http://x');
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const after = url.searchParams.get('starting_after');
    const start = after ? ids.indexOf(after) + 1 : 0;
    const data = ids.slice(start, start + limit).map((job_id) => jobView({ job_id, status: 'failed' }));
    const hasMore = start + limit < ids.length;
    return {
      status: 200,
      json: { object: 'list', data, has_more: hasMore, next_cursor: hasMore ? data[data.length - 1]?.job_id : null },
    };
  };

  test('for await walks every page, keeping the filters; a page is asked for only when reached', async () => {
    const { client, server } = await setup(pages);
    const seen: string[] = [];
    for await (const job of client.sdr2hdr.jobs.list({ status: 'failed', limit: 3 })) seen.push(job.job_id);
    assert.deepEqual(seen, ids);
    assert.deepEqual(
      server.requests.map((request) => request.path),
      [
        '/v1/sdr2hdr/jobs?status=failed&limit=3',
        '/v1/sdr2hdr/jobs?status=failed&limit=3&starting_after=job_2',
        '/v1/sdr2hdr/jobs?status=failed&limit=3&starting_after=job_5',
      ],
    );
  });

  test('toArray({limit}) stops at the limit without asking for more pages; await gives the first page', async () => {
    const { client, server } = await setup(pages);
    const five = await client.sdr2hdr.jobs.list({ limit: 3 }).toArray({ limit: 5 });
    assert.deepEqual(
      five.map((job) => job.job_id),
      ids.slice(0, 5),
    );
    assert.equal(server.requests.length, 2);
    const page = await client.sdr2hdr.jobs.list({ limit: 3 });
    assert.deepEqual([page.object, page.data.length, page.has_more, page.next_cursor], ['list', 3, true, 'job_2']);
  });
});
