// waitForJob: polls until a terminal status, raises the job's own error, never resubmits.

import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { MediaJobs, ProcessingError, TimeoutError } from '../src/index.js';
import type { JobView } from '../src/index.js';
import { jobView, startFaultServer } from './fault-server.js';
import type { Action, FaultServer } from './fault-server.js';

let server: FaultServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const failedError = {
  type: 'processing_error',
  code: 'out_of_memory',
  message: 'The input is too large for the workers.',
  param: null,
  request_id: 'req_submit1',
  doc_url: 'https://docs.example.test/errors.html#out_of_memory',
  retryable: false,
};

/** Serves the given job views to GETs in order (the last one repeats); any POST gets 500. */
async function setup(views: Record<string, unknown>[]) {
  let gets = 0;
  server = await startFaultServer((request): Action => {
    if (request.method !== 'GET') return { status: 500, body: 'unexpected' };
    const view = views[Math.min(gets, views.length - 1)];
    gets += 1;
    return { status: 200, json: view };
  });
  const sleeps: number[] = [];
  const client = new MediaJobs({
    apiKey: 'mjk_test',
    baseUrl: server.baseUrl,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { client, server, sleeps };
}

const posts = (s: FaultServer) => s.requests.filter((request) => request.method === 'POST').length;

describe('waitForJob', () => {
  test('polls with a growing interval and returns the succeeded job, reporting progress', async () => {
    const { client, server, sleeps } = await setup([
      jobView({ status: 'queued' }),
      jobView({ status: 'processing', progress: 0.3 }),
      jobView({ status: 'processing', progress: 0.7 }),
      jobView({ status: 'succeeded', progress: 1 }),
    ]);
    const seen: number[] = [];
    const job = await client.waitForJob('sdr2hdr', 'job_test1', {
      pollIntervalMs: 100,
      onProgress: (view: JobView) => seen.push(view.progress),
    });
    assert.equal(job.status, 'succeeded');
    assert.deepEqual(seen, [0, 0.3, 0.7, 1]);
    assert.deepEqual(sleeps, [100, 150, 225]);
    assert.equal(server.requests.length, 4);
    assert.ok(server.requests.every((request) => request.path === '/v1/sdr2hdr/jobs/job_test1'));
  });

  test('a failed job raises ProcessingError with the job error fields, and nothing is resubmitted', async () => {
    const failed = jobView({
      status: 'failed',
      error: failedError,
      billing: { estimated_credits: 24, charged_credits: 0, refunded: true, state: 'released' },
    });
    const { client, server } = await setup([jobView({ status: 'processing', progress: 0.5 }), failed]);
    const error = await client.waitForJob('sdr2hdr', 'job_test1', { pollIntervalMs: 1 }).then(
      () => assert.fail('expected ProcessingError'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ProcessingError);
    assert.equal(error.code, 'out_of_memory');
    assert.equal(error.type, 'processing_error');
    assert.equal(error.message, failedError.message);
    assert.equal(error.requestId, 'req_submit1');
    assert.equal(error.docUrl, failedError.doc_url);
    assert.equal(error.retryable, false);
    assert.equal(error.status, null);
    assert.equal(error.job?.billing.refunded, true);
    assert.equal(posts(server), 0, 'no POST: the job was not resubmitted');
    assert.equal(server.requests.length, 2, 'polling stopped at the failed status');
  });

  test('a retryable job error (upstream_error) is raised too: never resubmitted, never re-polled', async () => {
    const { client, server } = await setup([
      jobView({ status: 'failed', error: { ...failedError, code: 'upstream_error', retryable: true } }),
    ]);
    const error = await client.waitForJob('audio', 'job_test1').catch((caught: unknown) => caught);
    assert.ok(error instanceof ProcessingError);
    assert.equal(error.code, 'upstream_error');
    assert.equal(error.retryable, true);
    assert.equal(server.requests.length, 1);
    assert.equal(posts(server), 0);
  });

  test('a cancelled job stops polling and raises job_cancelled', async () => {
    const { client, server } = await setup([
      jobView({
        status: 'cancelled',
        error: { ...failedError, code: 'job_cancelled', message: 'The job was cancelled.' },
      }),
    ]);
    const error = await client.waitForJob('sdr2hdr', 'job_test1').catch((caught: unknown) => caught);
    assert.ok(error instanceof ProcessingError);
    assert.equal(error.code, 'job_cancelled');
    assert.equal(server.requests.length, 1);
  });

  test('partially_succeeded is terminal and returned for the caller to inspect', async () => {
    const { client } = await setup([
      jobView({ status: 'partially_succeeded', error: { ...failedError, code: 'invalid_media' } }),
    ]);
    const job = await client.waitForJob('sdr2hdr', 'job_test1');
    assert.equal(job.status, 'partially_succeeded');
    assert.equal(job.error?.code, 'invalid_media');
  });

  test('gives up with TimeoutError (wait_timeout) when the job outlives timeoutMs', async () => {
    server = await startFaultServer(() => ({ status: 200, json: jobView({ status: 'processing' }) }));
    const client = new MediaJobs({ apiKey: 'mjk_test', baseUrl: server.baseUrl });
    const error = await client
      .waitForJob('sdr2hdr', 'job_test1', { pollIntervalMs: 20, timeoutMs: 100 })
      .catch((caught: unknown) => caught);
    assert.ok(error instanceof TimeoutError);
    assert.equal(error.code, 'wait_timeout');
    assert.equal(posts(server), 0);
  });
});
