// Webhook delivery end to end: real jobs (ffmpeg), the real worker's relay and BullMQ sender, a
// receiver on loopback, and the reference library `standardwebhooks` verifying every delivery.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptedMp4, sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';
import { UNRECORDED_OUTCOME } from '../../src/webhooks/webhook-delivery.repository';
import {
  deleteRegisteredEndpoints,
  emitEvent,
  registerEndpoint,
  sleep,
  startReceiver,
  verify,
  waitForDelivery,
  type Receiver,
} from '../support/webhook-receiver';

describe('webhook delivery', () => {
  let api: TestApi;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let account: TestAccount;
  const receivers: Receiver[] = [];
  const receiver = async (...replies: Parameters<typeof startReceiver>): Promise<Receiver> => {
    const started = await startReceiver(...replies);
    receivers.push(started);
    return started;
  };

  beforeAll(async () => {
    stack = await startStack({
      REGION: 'wh-deliver',
      ALLOW_PRIVATE_URLS: '127.0.0.1',
      WEBHOOK_RETRY_SCHEDULE: '0,1,1,1',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-wh-')),
    });
    api = stack.api;
    account = await createAccount(api, { credits: 200 });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((started) => started.stop()));
    await deleteRegisteredEndpoints(api);
    await stack.close();
  });

  it("job.failed: signed, verified by standardwebhooks, data.error deep-equals the job view's error", async () => {
    const own = await createAccount(api, { credits: 50 });
    const hook = await receiver();
    const endpoint = await registerEndpoint(api, own.apiKey, hook.url());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: own.apiKey,
      body: { inputs: [{ upload_id: await upload(api, own.apiKey, await encryptedMp4()) }] },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, own.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('drm_protected');

    const [request] = await hook.waitFor(1);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toMatch(/^evt_/);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = verify(endpoint.secret, request);
    expect(payload).toEqual({
      id: request.headers['webhook-id'],
      event: 'job.failed',
      created_at: expect.any(String),
      // The specification's body (§6): data.job holds job_id only. Each item's status, charge, stored
      // output and checks ride beside it in data.items (the job view's own; the output without links).
      data: {
        job: { job_id: job.job_id },
        items: job.items.map((item: any) => ({
          index: item.index,
          status: item.status,
          charged_credits: item.charged_credits,
          output: item.output,
          checks: item.checks,
        })),
        error: job.error,
      },
    });
    expect(Object.keys(payload.data.job ?? {})).toEqual(['job_id']);
    expect(payload.data.error).toEqual(job.error);

    const events = await call(api, 'GET', `/v1/events?job_id=${job.job_id}`, { key: own.apiKey });
    expect(events.body.data).toEqual([{ object: 'event', ...payload }]);
    const delivery = await waitForDelivery(api, own.apiKey, endpoint.id, payload.id);
    expect(delivery).toMatchObject({
      state: 'delivered',
      attempt_count: 1,
      attempts: [{ attempt: 1, status_code: 200, error: null }],
    });
    expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('job.succeeded for a good job', async () => {
    const own = await createAccount(api, { credits: 50 });
    const hook = await receiver();
    const endpoint = await registerEndpoint(api, own.apiKey, hook.url(), ['job.succeeded']);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: own.apiKey,
      body: { inputs: [{ upload_id: await upload(api, own.apiKey, await sdrMp4()) }] },
    });
    const job = await waitForJob(api, own.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job.status).toBe('succeeded');
    const [request] = await hook.waitFor(1);
    expect(verify(endpoint.secret, request)).toMatchObject({
      event: 'job.succeeded',
      data: { job: { job_id: job.job_id }, error: null },
    });
  });

  it('retries after a 500 with the same webhook-id', async () => {
    const hook = await receiver({ status: 500 });
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    const event = await emitEvent(api, account.accountId);
    const [first, second] = await hook.waitFor(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(first.headers['webhook-id']).toBe(event.id);
    expect(second.body).toBe(first.body);
    expect(verify(endpoint.secret, second)).toEqual(event);
    // The schedule's second entry (1 s, ±10 %) separates them.
    expect(second.at - first.at).toBeGreaterThanOrEqual(800);
    const delivery = await waitForDelivery(api, account.apiKey, endpoint.id, event.id);
    expect(delivery.state).toBe('delivered');
    expect(delivery.attempts.map((attempt) => [attempt.status_code, attempt.error])).toEqual([
      [500, 'The endpoint answered HTTP 500.'],
      [200, null],
    ]);
  });

  it('a receiver that is down for a while gets the event once it is back', async () => {
    const hook = await receiver();
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    await hook.stop();
    const event = await emitEvent(api, account.accountId);
    // An attempt ended (refused), not just begun: the log holds an attempt from before it is sent.
    await waitForDelivery(api, account.apiKey, endpoint.id, event.id, (delivery) =>
      delivery.attempts.some((attempt) => attempt.error !== UNRECORDED_OUTCOME),
    );
    await hook.listen();
    const [request] = await hook.waitFor(1);
    expect(verify(endpoint.secret, request)).toEqual(event);
    const delivery = await waitForDelivery(api, account.apiKey, endpoint.id, event.id);
    expect(delivery.state).toBe('delivered');
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: expect.stringContaining('ECONNREFUSED') });
    expect(delivery.attempts.at(-1)).toMatchObject({ status_code: 200, error: null });
  });

  it('honours Retry-After on 429', async () => {
    const hook = await receiver({ status: 429, headers: { 'retry-after': '2' } });
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    await emitEvent(api, account.accountId);
    const [first, second] = await hook.waitFor(2);
    // The schedule alone would retry after about 1 s.
    expect(second.at - first.at).toBeGreaterThanOrEqual(1900);
    expect(verify(endpoint.secret, second).id).toBe(first.headers['webhook-id']);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const target = await receiver();
    const hook = await receiver({ status: 302, headers: { location: target.url('/elsewhere') } });
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    const event = await emitEvent(api, account.accountId);
    const delivery = await waitForDelivery(api, account.apiKey, endpoint.id, event.id);
    expect(delivery.state).toBe('delivered');
    expect(delivery.attempts.map((attempt) => attempt.status_code)).toEqual([302, 200]);
    expect(delivery.attempts[0].error).toContain('redirects are not followed');
    expect(hook.received.map((request) => request.path)).toEqual(['/hook', '/hook']);
    expect(target.received).toEqual([]);
  });

  it('410 Gone disables the endpoint; nothing more is sent to it', async () => {
    const own = await createAccount(api);
    const hook = await receiver({ status: 410 });
    const endpoint = await registerEndpoint(api, own.apiKey, hook.url());
    const event = await emitEvent(api, own.accountId);
    const delivery = await waitForDelivery(api, own.apiKey, endpoint.id, event.id);
    expect(delivery).toMatchObject({ state: 'failed', attempt_count: 1, attempts: [{ status_code: 410 }] });
    const view = await call(api, 'GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: own.apiKey });
    expect(view.body).toMatchObject({
      status: 'disabled',
      disabled_reason: 'The endpoint answered HTTP 410 Gone.',
      disabled_at: expect.any(String),
    });

    const later = await emitEvent(api, own.accountId);
    await sleep(1500);
    expect(hook.received).toHaveLength(1);
    const deliveries = await call(api, 'GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?event_id=${later.id}`, {
      key: own.apiKey,
    });
    expect(deliveries.body.data).toEqual([]);
    const redeliver = await call(api, 'POST', `/v1/events/${later.id}/redeliver?endpoint_id=${endpoint.id}`, {
      key: own.apiKey,
    });
    expect(redeliver.body.error).toMatchObject({ code: 'invalid_parameter', param: 'endpoint_id' });
  });

  it('after the last attempt of the schedule the delivery is failed', async () => {
    const hook = await receiver({ status: 500 }, { status: 502 }, { status: 503 }, { status: 500 });
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    const event = await emitEvent(api, account.accountId);
    const delivery = await waitForDelivery(api, account.apiKey, endpoint.id, event.id);
    expect(delivery).toMatchObject({
      state: 'failed',
      attempt_count: 4,
      last_error: 'The endpoint answered HTTP 500.',
    });
    expect(delivery.attempts.map((attempt) => attempt.status_code)).toEqual([500, 502, 503, 500]);
    await sleep(1200);
    expect(hook.received).toHaveLength(4);
  });

  it('during a secret rotation a delivery verifies with either secret', async () => {
    const own = await createAccount(api);
    const hook = await receiver();
    const endpoint = await registerEndpoint(api, own.apiKey, hook.url());
    const rotated = await call(api, 'POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key: own.apiKey });
    const event = await emitEvent(api, own.accountId);
    const [request] = await hook.waitFor(1);
    expect(request.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(rotated.body.secret, request)).toEqual(event);
    expect(verify(endpoint.secret, request)).toEqual(event);
  });

  it('redelivers an event on request: same webhook-id, to every subscribed endpoint or one', async () => {
    const own = await createAccount(api);
    const [one, two] = [await receiver(), await receiver()];
    const first = await registerEndpoint(api, own.apiKey, one.url());
    const second = await registerEndpoint(api, own.apiKey, two.url());
    const event = await emitEvent(api, own.accountId);
    await one.waitFor(1);
    await two.waitFor(1);

    const all = await call(api, 'POST', `/v1/events/${event.id}/redeliver`, { key: own.apiKey });
    expect(all.status).toBe(202);
    expect(all.body.data.map((delivery: { endpoint_id: string }) => delivery.endpoint_id).sort()).toEqual(
      [first.id, second.id].sort(),
    );
    expect(all.body.data[0]).toMatchObject({
      object: 'webhook_delivery',
      event_id: event.id,
      redelivery: true,
      state: 'pending',
    });
    const only = await call(api, 'POST', `/v1/events/${event.id}/redeliver?endpoint_id=${second.id}`, {
      key: own.apiKey,
    });
    expect(only.body.data).toHaveLength(1);

    await one.waitFor(2);
    const received = await two.waitFor(3);
    expect(received.map((request) => verify(second.secret, request).id)).toEqual([event.id, event.id, event.id]);
    await sleep(500);
    expect(one.received).toHaveLength(2);
    const log = await call(api, 'GET', `/v1/webhook-endpoints/${second.id}/deliveries`, { key: own.apiKey });
    expect(log.body.data.map((delivery: { redelivery: boolean }) => delivery.redelivery)).toEqual([true, true, false]);
  });
});
