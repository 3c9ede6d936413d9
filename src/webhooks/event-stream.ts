// GET /v1/events/stream: the account's events as server-sent events, for `mediajobs listen` (a local
// webhook receiver without a public address). The outbox is the source: polled once a second, each
// event sent once per connection with `id:` = its evt_ id, so a client reconnecting with
// Last-Event-ID resumes after the last event it saw.
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { idFloor } from '../common/ids';
import { WebhooksRepository } from './webhooks.repository';

/** How often the outbox is read for new events. */
export const STREAM_POLL_MS = 1000;
/** A comment line this often keeps proxies and the client from timing the connection out. */
const HEARTBEAT_MS = 15_000;
/**
 * An event's id is taken inside the transaction that ends its job, so it can commit a little after a
 * later id: each poll looks this far back and skips what this connection already sent.
 */
const COMMIT_LAG_MS = 10_000;
const BATCH = 100;
const EVENT_ID = /^evt_[0-9A-Za-z]{9,40}$/;

@Injectable()
export class EventStream implements OnModuleDestroy {
  private readonly logger = new Logger(EventStream.name);
  private readonly open = new Set<() => void>();

  constructor(private readonly webhooks: WebhooksRepository) {}

  /**
   * Streams until the client goes away (or the API shuts down). Without Last-Event-ID it starts with
   * the events created from now on; with one (an evt_ id), right after that event.
   */
  async serve(accountId: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const lastEventId = request.headers['last-event-id'];
    const resumeAfter = typeof lastEventId === 'string' && EVENT_ID.test(lastEventId) ? lastEventId : null;
    const connectedAt = Date.now();
    const headers = {
      ...reply.getHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    };
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, headers as Record<string, string>);
    raw.write(`retry: ${STREAM_POLL_MS * 2}\n: mediajobs event stream for ${accountId}\n\n`);

    let closed = false;
    let wake: () => void = () => undefined;
    // Ends the response at once (the client went away, or the API is shutting down), without waiting
    // for a poll in flight: the HTTP server can then close this connection.
    const close = (): void => {
      closed = true;
      wake();
      if (!raw.writableEnded) raw.end();
    };
    this.open.add(close);
    raw.on('close', close);
    const sent = new Map<string, number>();
    let lastBeat = Date.now();
    try {
      while (!closed) {
        const now = Date.now();
        // Never before the start (Last-Event-ID or the connection), and a little back for late commits.
        const windowFloor = idFloor('evt', Math.max(connectedAt, now) - COMMIT_LAG_MS);
        const startFloor = resumeAfter ?? idFloor('evt', connectedAt);
        const floor = windowFloor > startFloor ? windowFloor : startFloor;
        for (const event of await this.webhooks.eventsAfter(accountId, floor, BATCH)) {
          if (closed) break;
          if (sent.has(event.id)) continue;
          sent.set(event.id, now);
          raw.write(`id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.payload)}\n\n`);
        }
        for (const [id, at] of sent) if (at < now - 2 * COMMIT_LAG_MS) sent.delete(id);
        if (closed) break;
        if (now - lastBeat >= HEARTBEAT_MS) {
          raw.write(': keep-alive\n\n');
          lastBeat = now;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, STREAM_POLL_MS);
        });
      }
    } catch (error) {
      // The stream is already open: the client sees the connection end and reconnects with Last-Event-ID.
      this.logger.warn({ err: error, account_id: accountId }, 'event stream stopped');
    } finally {
      this.open.delete(close);
      raw.off('close', close);
      if (!raw.writableEnded) raw.end();
    }
  }

  /** Ends every open stream, so the HTTP server can close (a stream never ends by itself). */
  onModuleDestroy(): void {
    for (const close of this.open) close();
  }
}
