// Issue 12 items 11–13: what a submit body may hold and how the API answers bodies it cannot take —
// a lone UTF-16 surrogate is a 400 with its place (not a retryable 500), a form or text body is 415
// "send application/json", and metadata keys named like Object's methods are kept, never dropped.
import { createAccount, call, type TestAccount } from '../support/app';
import { upload } from '../support/jobs';
import { startStack } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';
import { expectError } from '../support/error-checks';

describe('request bodies', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let account: TestAccount;
  let uploadId: string;

  beforeAll(async () => {
    stack = await startStack({ IP_RATE_LIMIT: '1000', WORKER_CONCURRENCY: '1' });
    account = await createAccount(stack.api, { credits: 1000 });
    uploadId = await upload(stack.api, account.apiKey, await sdrMp4());
  });
  afterAll(() => stack.close());

  /** Cancels what a test submitted, so the worker does not spend the machine on it. */
  async function cancel(jobId: string): Promise<void> {
    await call(stack.api, 'POST', `/v1/sdr2hdr/jobs/${jobId}/cancel`, { key: account.apiKey });
  }

  const rawSubmit = (body: string, contentType?: string) =>
    call(stack.api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      rawBody: body,
      headers: contentType ? { 'content-type': contentType } : {},
    });

  describe('a lone UTF-16 surrogate (item 11)', () => {
    it('in a metadata value → 400 invalid_parameter, param metadata.title, not retryable; no job', async () => {
      const before = await call(stack.api, 'GET', '/v1/sdr2hdr/jobs', { key: account.apiKey });
      const response = await rawSubmit(
        `{"inputs":[{"upload_id":"${uploadId}"}],"metadata":{"title":"broken \\ud800 text"}}`,
        'application/json',
      );
      expectError(stack.api, response, 'invalid_parameter', 'metadata.title');
      expect(response.status).toBe(400);
      expect(response.body.error.retryable).toBe(false);
      expect(response.body.error.message).toContain('surrogate');
      const after = await call(stack.api, 'GET', '/v1/sdr2hdr/jobs', { key: account.apiKey });
      expect(after.body.data).toHaveLength(before.body.data.length);
    });

    it('in a metadata key → 400 with param metadata; a well-formed pair (an emoji) is accepted', async () => {
      const key = await rawSubmit(
        `{"inputs":[{"upload_id":"${uploadId}"}],"metadata":{"\\udc00":"x"}}`,
        'application/json',
      );
      expectError(stack.api, key, 'invalid_parameter', 'metadata');
      const emoji = await rawSubmit(
        `{"inputs":[{"upload_id":"${uploadId}"}],"metadata":{"title":"\\ud83c\\udfac take 1"}}`,
        'application/json',
      );
      expect(emoji.status).toBe(202);
      expect(emoji.body.metadata).toEqual({ title: '🎬 take 1' });
      await cancel(emoji.body.job_id);
    });
  });

  describe('a body that is not JSON (item 12)', () => {
    const json = () => JSON.stringify({ inputs: [{ upload_id: uploadId }] });

    it('sent as a form (curl -d) → 415 unsupported_content_type, param Content-Type, "send application/json"', async () => {
      const response = await rawSubmit(json(), 'application/x-www-form-urlencoded');
      expectError(stack.api, response, 'unsupported_content_type', 'Content-Type');
      expect(response.status).toBe(415);
      expect(response.body.error.message).toContain('application/json');
    });

    it('sent as text/plain → the same 415', async () => {
      const response = await rawSubmit(json(), 'text/plain');
      expectError(stack.api, response, 'unsupported_content_type', 'Content-Type');
      expect(response.body.error.message).toContain('application/json');
    });

    it('an upload sent as text/plain → 415 naming the media types it takes', async () => {
      const response = await call(stack.api, 'POST', '/v1/uploads', {
        key: account.apiKey,
        rawBody: 'not media',
        headers: { 'content-type': 'text/plain' },
      });
      expectError(stack.api, response, 'unsupported_content_type', 'Content-Type');
      expect(response.body.error.message).toContain('video/*');
    });
  });

  describe("metadata keys named like Object's own (item 13)", () => {
    it('toString, valueOf, hasOwnProperty and isPrototypeOf are kept, in the response and when read back', async () => {
      const metadata = { toString: 'b', valueOf: 'c', hasOwnProperty: 'd', isPrototypeOf: 'e', customer_ref: 'A-17' };
      const response = await call(stack.api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }], metadata },
      });
      expect(response.status).toBe(202);
      expect(response.body.metadata).toEqual(metadata);
      const read = await call(stack.api, 'GET', `/v1/sdr2hdr/jobs/${response.body.job_id}`, { key: account.apiKey });
      expect(read.body.metadata).toEqual(metadata);
      await cancel(response.body.job_id);
    });

    it.each(['constructor', 'prototype'])('%s is refused with 400 and its path, never dropped', async (name) => {
      const response = await rawSubmit(
        `{"inputs":[{"upload_id":"${uploadId}"}],"metadata":{"${name}":"a","customer_ref":"A-17"}}`,
        'application/json',
      );
      expectError(stack.api, response, 'invalid_parameter', `metadata.${name}`);
      expect(response.body.error.message).toContain('reserved');
    });
  });
});
