// GET /v1/events/stream (server-sent events) against the real service: a stream lives only as long as
// its credential (a revoked key, a signed-out session, a suspended account end it within the second in
// which the API refuses them), a resume delivers every event after the one named for as long as events
// are kept (an older resume point is a clear error, not a silent gap), and an account may hold only so
// many open streams.
import { request as httpRequest } from 'node:http';
import { idFloor, randomBase62 } from '../../src/common/ids';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { asMember, PASSWORD, redeem, sameOrigin, uniqueEmail } from '../support/dashboard-session';
import { emitEvent, eventually, sleep } from '../support/webhook-receiver';

interface StreamedEvent {
  id: string;
  event: string;
  data: string;
}

interface OpenStream {
  status: number;
  /** The envelope, when the stream was refused. */
  body?: any;
  events: StreamedEvent[];
  /** Resolves with the time the server ended the stream. */
  ended: Promise<number>;
  close(): void;
}

/** How long after the API refuses a credential its open streams may still be open (docs/api-decisions.md §3: "within one second"). */
const CUT_OFF_MS = 1500;

describe('GET /v1/events/stream', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  /** Opens a stream on a connection of its own (node:http, no keep-alive), read until the server ends it. */
  function openStream(headers: Record<string, string>): Promise<OpenStream> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(`${api.url}/v1/events/stream`, { headers, agent: false });
      request.on('error', reject);
      request.on('response', (response) => {
        const events: StreamedEvent[] = [];
        let buffer = '';
        response.setEncoding('utf8');
        if (response.statusCode !== 200) {
          response.on('data', (chunk: string) => (buffer += chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode!,
              body: JSON.parse(buffer),
              events,
              ended: Promise.resolve(Date.now()),
              close: () => undefined,
            }),
          );
          return;
        }
        const ended = new Promise<number>((done) => response.on('close', () => done(Date.now())));
        response.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const fields: Record<string, string> = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const colon = line.indexOf(':');
              if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
            }
            if (fields.data !== undefined)
              events.push({ id: fields.id ?? '', event: fields.event ?? 'message', data: fields.data });
          }
        });
        resolve({ status: 200, events, ended, close: () => request.destroy() });
      });
      request.end();
    });
  }

  const keyHeaders = (key: string, lastEventId?: string) => ({
    'x-api-key': key,
    ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
  });

  async function webhooksKey(account: TestAccount): Promise<{ id: string; key: string }> {
    const created = await call(api, 'POST', '/v1/account/api-keys', {
      key: account.apiKey,
      body: { scopes: ['webhooks'] },
    });
    expect(created.status).toBe(201);
    return { id: created.body.id, key: created.body.key };
  }

  /** Resolves once the stream has delivered `eventId`. */
  const delivered = (stream: OpenStream, eventId: string) =>
    eventually(() => (stream.events.some((event) => event.id === eventId) ? true : undefined), 10_000);

  describe('a stream lives only as long as its credential', () => {
    it('revoking the key ends its stream within the second; nothing after is sent; a reconnect is 401 revoked_api_key', async () => {
      const account = await createAccount(api);
      const { id, key } = await webhooksKey(account);
      const stream = await openStream(keyHeaders(key));
      expect(stream.status).toBe(200);
      const before = await emitEvent(api, account.accountId);
      await delivered(stream, before.id);

      const revoked = await call(api, 'DELETE', `/v1/account/api-keys/${id}`, { key: account.apiKey });
      expect(revoked.status).toBe(200);
      const revokedAt = Date.now();
      expect((await call(api, 'GET', '/v1/events', { key })).body.error.code).toBe('revoked_api_key');
      const after = await emitEvent(api, account.accountId);

      const endedAt = await Promise.race([stream.ended, sleep(5000).then(() => Infinity)]);
      stream.close();
      expect(endedAt - revokedAt).toBeLessThan(CUT_OFF_MS);
      expect(stream.events.map((event) => event.id)).not.toContain(after.id);
      const again = await openStream(keyHeaders(key));
      expect([again.status, again.body.error.code]).toEqual([401, 'revoked_api_key']);
    });

    it('signing out ends the session’s stream within the second; a reconnect with the cookie is 401 invalid_session', async () => {
      const created = await call(api, 'POST', '/v1/admin/accounts', {
        admin: true,
        body: { name: 'Stream Co', plan: 'pro', owner_email: uniqueEmail('stream') },
      });
      const session = await redeem(api, created.body.owner_invite_url, PASSWORD);
      const stream = await openStream({ cookie: session.cookie });
      expect(stream.status).toBe(200);
      const before = await emitEvent(api, created.body.account.id);
      await delivered(stream, before.id);

      expect((await asMember(api, session, 'DELETE', '/v1/sessions/current')).status).toBe(200);
      const signedOutAt = Date.now();
      const after = await emitEvent(api, created.body.account.id);

      const endedAt = await Promise.race([stream.ended, sleep(5000).then(() => Infinity)]);
      stream.close();
      expect(endedAt - signedOutAt).toBeLessThan(CUT_OFF_MS);
      expect(stream.events.map((event) => event.id)).not.toContain(after.id);
      const again = await openStream({ cookie: session.cookie, ...sameOrigin(api) });
      expect([again.status, again.body.error.code]).toEqual([401, 'invalid_session']);
    });

    it('suspending the account ends its streams within the second; a suspended account gets no stream at all', async () => {
      const account = await createAccount(api);
      const { key } = await webhooksKey(account);
      const stream = await openStream(keyHeaders(key));
      expect(stream.status).toBe(200);

      const suspended = await call(api, 'PATCH', `/v1/admin/accounts/${account.accountId}`, {
        admin: true,
        body: { status: 'suspended' },
      });
      expect(suspended.status).toBe(200);
      const suspendedAt = Date.now();
      const after = await emitEvent(api, account.accountId);

      const endedAt = await Promise.race([stream.ended, sleep(5000).then(() => Infinity)]);
      stream.close();
      expect(endedAt - suspendedAt).toBeLessThan(CUT_OFF_MS);
      expect(stream.events.map((event) => event.id)).not.toContain(after.id);
      const again = await openStream(keyHeaders(key, after.id));
      expect([again.status, again.body.error.code]).toEqual([403, 'account_suspended']);
    });
  });

  it('a test event (POST /v1/webhook-endpoints/{id}/test) arrives on an open stream as the guide says, body and all', async () => {
    const account = await createAccount(api);
    const stream = await openStream(keyHeaders(account.apiKey));
    expect(stream.status).toBe(200);
    // No worker runs here: nothing is sent to the endpoint; the stream alone must show the event.
    const endpoint = await call(api, 'POST', '/v1/webhook-endpoints', {
      key: account.apiKey,
      body: { url: 'http://127.0.0.1:9/hooks' },
    });
    expect(endpoint.status).toBe(201);
    const test = await call(api, 'POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { key: account.apiKey });
    expect(test.status).toBe(202);

    const arrived = await eventually(
      () => stream.events.find((event) => event.id === test.body.event_id),
      5000,
    ).finally(() => stream.close());
    expect(arrived.event).toBe('webhook.test');
    // The webhook body, as the events log shows it (less its `object`).
    const { object: _object, ...logged } = (
      await call(api, 'GET', `/v1/events/${test.body.event_id}`, { key: account.apiKey })
    ).body;
    expect(JSON.parse(arrived.data)).toEqual(logged);
    expect(logged).toMatchObject({ event: 'webhook.test', data: { job: null, error: null } });
  });

  describe('resuming with Last-Event-ID', () => {
    it('delivers every event after the one named, however long ago it was (e1, 1 s after e0, reconnecting 14 s later)', async () => {
      const account = await createAccount(api);
      const e0 = await emitEvent(api, account.accountId);
      await sleep(1000);
      const e1 = await emitEvent(api, account.accountId);
      await sleep(14_000);

      const stream = await openStream(keyHeaders(account.apiKey, e0.id));
      expect(stream.status).toBe(200);
      await delivered(stream, e1.id);
      const live = await emitEvent(api, account.accountId);
      await delivered(stream, live.id);
      stream.close();
      expect(stream.events.map((event) => event.id)).toEqual([e1.id, live.id]);
    }, 40_000);

    it('a resume point older than the events kept is 410 resume_point_expired, not a silent gap', async () => {
      const account = await createAccount(api);
      const days = api.config.jobRetentionDays;
      const old = `${idFloor('evt', Date.now() - (days + 1) * 86_400_000)}${randomBase62(14)}`;
      const refused = await openStream(keyHeaders(account.apiKey, old));
      expect(refused.status).toBe(410);
      expect(refused.body.error).toMatchObject({
        code: 'resume_point_expired',
        param: 'Last-Event-ID',
        details: { retention_days: days },
      });
    });

    it('a Last-Event-ID that is not an event id is 400 invalid_parameter', async () => {
      const account = await createAccount(api);
      for (const value of ['e0', 'evt_!!', `${idFloor('evt', Date.now() + 86_400_000)}${randomBase62(14)}`]) {
        const refused = await openStream(keyHeaders(account.apiKey, value));
        expect([value, refused.status, refused.body.error.code, refused.body.error.param]).toEqual([
          value,
          400,
          'invalid_parameter',
          'Last-Event-ID',
        ]);
      }
    });
  });

  it("an account may hold its plan's number of open streams; one more is 429 stream_limit_exceeded with the numbers", async () => {
    const account = await createAccount(api, { plan: 'free' });
    const other = await createAccount(api, { plan: 'free' });
    const open: OpenStream[] = [];
    for (;;) {
      const stream = await openStream(keyHeaders(account.apiKey));
      if (stream.status !== 200) {
        expect(stream.status).toBe(429);
        expect(stream.body.error).toMatchObject({
          code: 'stream_limit_exceeded',
          details: { limit: open.length, open_streams: open.length },
        });
        break;
      }
      open.push(stream);
      expect(open.length).toBeLessThanOrEqual(10);
    }
    expect(open.length).toBeGreaterThan(0);
    // Another account is not affected; closing a stream frees its place at once.
    const others = await openStream(keyHeaders(other.apiKey));
    expect(others.status).toBe(200);
    others.close();
    open.pop()!.close();
    const replacement = await eventually(async () => {
      const stream = await openStream(keyHeaders(account.apiKey));
      return stream.status === 200 ? stream : undefined;
    }, 5000);
    for (const stream of [...open, replacement]) stream.close();
  });
});
