// Every request a receiver got is in the delivery log (issue 36 item 16). A worker that loses PostgreSQL
// after an attempt went out (its backend terminated while it writes the outcome) cannot write that
// outcome; the delivery is sent again once its lease ends, with the same webhook-id — and the log still
// counts both requests. The real worker and relay, a receiver on loopback counting webhook-id, the
// delivery log read through the API; the termination timed from outside (test/support/idle-backend-kill.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { createAccount } from '../support/app';
import { IdleBackendKiller } from '../support/idle-backend-kill';
import { pollUntil } from '../support/processes';
import { deleteRegisteredEndpoints, emitEvent, registerEndpoint, waitForDelivery } from '../support/webhook-receiver';
import { startStack } from '../support/worker';
import { UNRECORDED_OUTCOME } from '../../src/webhooks/webhook-delivery.repository';

describe('the delivery log', () => {
  it('counts an attempt whose outcome was lost with its backend: requests received = attempts logged', async () => {
    const stack = await startStack({ REGION: 'wh-attempt-log', ALLOW_PRIVATE_URLS: '127.0.0.1' });
    const killer = await IdleBackendKiller.connect(process.env.TEST_DATABASE!);
    const db = stack.api.app.get(DataSource);
    const received = new Map<string, number>();
    let first: Promise<void> | undefined;
    // Answers 200; before answering the first request, it holds the delivery's row, so the worker's
    // write of that attempt's outcome waits behind it and is cut there.
    const server: Server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const id = String(request.headers['webhook-id']);
        received.set(id, (received.get(id) ?? 0) + 1);
        first ??= killer.hold(`SELECT 1 FROM webhook_deliveries WHERE event_id = $1 FOR UPDATE`, [id]);
        void first.then(() => response.end());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const account = await createAccount(stack.api);
      const port = (server.address() as AddressInfo).port;
      const endpoint = await registerEndpoint(stack.api, account.apiKey, `http://127.0.0.1:${port}/hook`);
      const event = await emitEvent(stack.api, account.accountId);

      expect(await killer.killWaiter()).toBe('idle in transaction');
      // The worker's lease on the delivery (a minute) ends now rather than in a minute: it is due again.
      await pollUntil(
        'the delivery to be leased still',
        async () =>
          (
            await db.query(
              `UPDATE webhook_deliveries SET lease_until = now() WHERE event_id = $1 AND lease_until > now()`,
              [event.id],
            )
          )[1] === 1,
        30_000,
      );
      const delivery = await waitForDelivery(stack.api, account.apiKey, endpoint.id, event.id);
      expect(delivery.state).toBe('delivered');
      expect(received.get(event.id)).toBe(2);
      expect(delivery.attempt_count).toBe(2);
      expect(delivery.attempts.map((attempt) => attempt.attempt)).toEqual([1, 2]);
      // The first says its outcome was lost, rather than pretending to one.
      expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: UNRECORDED_OUTCOME });
      expect(delivery.attempts[1]).toMatchObject({ status_code: 200, error: null });
    } finally {
      await deleteRegisteredEndpoints(stack.api);
      await new Promise((resolve) => server.close(resolve));
      await killer.close();
      await stack.close();
    }
  }, 120_000);
});
