// The database, not Redis or a worker's memory, decides what is still to be sent: a worker stopped
// mid-delivery, a lost queue or a dead worker's lease never lose an event. And the private-address
// rule is applied again when sending, by the worker's own configuration.
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { startWorker, type TestWorker } from '../support/worker';
import { UNRECORDED_OUTCOME } from '../../src/webhooks/webhook-delivery.repository';
import {
  deleteRegisteredEndpoints,
  emitEvent,
  registerEndpoint,
  startReceiver,
  verify,
  waitForDelivery,
  type Receiver,
} from '../support/webhook-receiver';

const ENV = { REGION: 'wh-resilience', ALLOW_PRIVATE_URLS: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1' };

describe('webhook delivery survives workers and Redis', () => {
  let api: TestApi;
  let worker: TestWorker | undefined;
  let account: TestAccount;
  const receivers: Receiver[] = [];
  const receiver = async (...replies: Parameters<typeof startReceiver>): Promise<Receiver> => {
    const started = await startReceiver(...replies);
    receivers.push(started);
    return started;
  };
  const restartWorker = async (overrides: Record<string, string> = {}): Promise<void> => {
    await worker?.close();
    worker = await startWorker({
      ...ENV,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
      ...overrides,
    });
  };

  beforeAll(async () => {
    api = await startApi(ENV);
    await restartWorker();
    account = await createAccount(api);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((started) => started.stop()));
    await deleteRegisteredEndpoints(api);
    await worker?.close();
    await api.close();
  });

  it('a worker stopped in the middle of a delivery does not lose the event', async () => {
    const hook = await receiver('hang');
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    const event = await emitEvent(api, account.accountId);
    await hook.waitFor(1);
    // The receiver has the request but has not answered: the worker goes away now.
    await worker!.close();
    worker = undefined;
    await restartWorker();
    const requests = await hook.waitFor(2);
    expect(requests.map((request) => request.headers['webhook-id'])).toEqual([event.id, event.id]);
    expect(verify(endpoint.secret, requests[1])).toEqual(event);
    const delivery = await waitForDelivery(api, account.apiKey, endpoint.id, event.id);
    // Both requests are in the log: the stopped worker's without an outcome.
    expect(delivery).toMatchObject({
      state: 'delivered',
      attempts: [{ status_code: null, error: UNRECORDED_OUTCOME }, { status_code: 200 }],
    });
  });

  it('a queue wiped from Redis does not lose a pending retry', async () => {
    const hook = await receiver({ status: 503, headers: { 'retry-after': '2' } });
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    const event = await emitEvent(api, account.accountId);
    await waitForDelivery(api, account.apiKey, endpoint.id, event.id, (delivery) => delivery.attempt_count === 1);
    // Every key of the webhooks queue goes, the delayed retry with them.
    const redis = new Redis(api.config.redisUrl);
    try {
      const keys = await redis.keys(`${api.config.redisPrefix}:webhooks:*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    const [, second] = await hook.waitFor(2);
    expect(verify(endpoint.secret, second)).toEqual(event);
    expect((await waitForDelivery(api, account.apiKey, endpoint.id, event.id)).state).toBe('delivered');
  });

  it('a delivery leased by a worker that died is sent once the lease runs out', async () => {
    await worker!.close();
    worker = undefined;
    const hook = await receiver();
    // Subscribed to another kind, so the only delivery is the one asked for below (no relay race).
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url(), ['job.succeeded']);
    const event = await emitEvent(api, account.accountId, 'job.failed');
    const redelivered = await call(api, 'POST', `/v1/events/${event.id}/redeliver?endpoint_id=${endpoint.id}`, {
      key: account.apiKey,
    });
    expect(redelivered.status).toBe(202);
    // As if a worker had leased it and then been killed (SIGKILL): the lease still runs for 2 s.
    await api.app
      .get(DataSource)
      .query(
        `UPDATE webhook_deliveries SET lease_token = 'dead-worker', lease_until = now() + interval '2 seconds' WHERE id = $1`,
        [redelivered.body.data[0].id],
      );
    const leasedUntil = Date.now() + 2000;
    await restartWorker();
    const [request] = await hook.waitFor(1);
    expect(request.at).toBeGreaterThanOrEqual(leasedUntil - 100);
    expect(verify(endpoint.secret, request)).toEqual(event);
  });

  it('the private-address rule is checked again at delivery time, by the worker', async () => {
    await restartWorker({ ALLOW_PRIVATE_URLS: '' });
    const hook = await receiver();
    // Registered while the API allows 127.0.0.1; the worker no longer does.
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url());
    const event = await emitEvent(api, account.accountId);
    const delivery = await waitForDelivery(api, account.apiKey, endpoint.id, event.id, undefined, 15_000);
    expect(delivery.state).toBe('failed');
    expect(delivery.attempts).toHaveLength(4);
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({
        status_code: null,
        error: expect.stringContaining('private, loopback or link-local'),
      });
    }
    expect(hook.received).toEqual([]);
    await restartWorker();
  });
});
