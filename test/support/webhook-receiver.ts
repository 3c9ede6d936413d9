// Shared by the webhook, SDK and chaos tests: a scriptable receiver on loopback, Standard Webhooks verification
// with the reference library, events written through the production outbox writer.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { toErrorObject, type ErrorObject } from '../../src/common/errors';
import { newId } from '../../src/common/ids';
import { OutboxWriter, type EventPayload, type JobEvent } from '../../src/webhooks/outbox.writer';
import { call, type TestApi } from './app';
import type { DeliveryView } from '../../src/webhooks/webhooks.service';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** What the receiver answers to one request; 'hang' keeps the request open until the receiver stops. */
export type Reply = { status: number; headers?: Record<string, string> } | 'hang';

export class Receiver {
  readonly received: Received[] = [];
  private readonly replies: Reply[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  private server?: Server;
  port = 0;

  /** Answers the next requests in this order; then 200. */
  script(...replies: Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Listens on `port` (0 = any free one; the same port again after stop()). */
  async listen(port = this.port): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers as IncomingHttpHeaders).map(([name, value]) => [name, String(value)]),
        );
        this.received.push({
          path: req.url ?? '',
          headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        const reply = this.replies.shift() ?? { status: 200 };
        if (reply === 'hang') {
          this.hanging.add(res);
          return;
        }
        res.writeHead(reply.status, reply.headers).end('ok');
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening and drops every connection (the port then refuses connections). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.hanging.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Waits until at least `count` requests arrived (on `path` when given). */
  async waitFor(count: number, options: { path?: string; timeoutMs?: number } = {}): Promise<Received[]> {
    return eventually(() => {
      const matching = this.received.filter((request) => options.path === undefined || request.path === options.path);
      return matching.length >= count ? matching : undefined;
    }, options.timeoutMs);
  }
}

export async function startReceiver(...replies: Reply[]): Promise<Receiver> {
  return new Receiver().script(...replies).listen(0);
}

/** Polls `probe` until it returns a value (not undefined). */
export async function eventually<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(100);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Verifies a delivery with the reference library (throws on a bad signature) and returns its payload. */
export function verify(secret: string, request: Received): EventPayload {
  return new Webhook(secret).verify(request.body, request.headers) as EventPayload;
}

/** Endpoints this test file registered: deleted afterwards, so no later file's worker keeps retrying them. */
const registered: string[] = [];

export async function deleteRegisteredEndpoints(api: TestApi): Promise<void> {
  await api.app.get(DataSource).query(`DELETE FROM webhook_endpoints WHERE id = ANY ($1)`, [registered.splice(0)]);
}

export async function registerEndpoint(
  api: TestApi,
  key: string,
  url: string,
  events?: JobEvent[],
): Promise<{ id: string; secret: string; url: string; events: JobEvent[] }> {
  const response = await call(api, 'POST', '/v1/webhook-endpoints', { key, body: events ? { url, events } : { url } });
  if (response.status !== 201) throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
  registered.push(response.body.id as string);
  return response.body;
}

/** A job's terminal event written through the production outbox writer, as a job's end would. */
export async function emitEvent(
  api: TestApi,
  accountId: string,
  event: JobEvent = 'job.failed',
  error: ErrorObject | null = toErrorObject('upstream_error', { requestId: newId('req'), docsUrl: api.config.docsUrl }),
): Promise<EventPayload> {
  const writer = api.app.get(OutboxWriter, { strict: false });
  return api.app
    .get(DataSource)
    .transaction((manager) => writer.write(manager, { accountId, jobId: newId('job'), event, error }));
}

export type { DeliveryView };

/** The endpoint's delivery of `eventId` once `done` holds for it. */
export async function waitForDelivery(
  api: TestApi,
  key: string,
  endpointId: string,
  eventId: string,
  done: (delivery: DeliveryView) => boolean = (delivery) => delivery.state !== 'pending',
  timeoutMs?: number,
): Promise<DeliveryView> {
  return eventually(async () => {
    const response = await call(api, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries?event_id=${eventId}`, {
      key,
    });
    if (response.status !== 200) throw new Error(`deliveries: ${response.status} ${JSON.stringify(response.body)}`);
    const delivery = (response.body.data as DeliveryView[])[0];
    return delivery && done(delivery) ? delivery : undefined;
  }, timeoutMs);
}
