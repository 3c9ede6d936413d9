// GET /v1/events/stream: the account's events as server-sent events, for `mediajobs listen` (a local
// webhook receiver without a public address). Each event is `id: evt_…`, `event: <type>`, `data: <the
// webhook body>`, sent once per connection.
// - Live events come from the shared Redis subscriber (event-feed.ts), so an open stream costs no query.
// - A reconnect with Last-Event-ID first reads every event after that one from the outbox (events are
//   kept JOB_RETENTION_DAYS), then goes live; a resume point older than that is 410 resume_point_expired.
// - The credential that opened a stream is judged again by the access guard's rules (a revoked or
//   expired key, a signed-out or idle session, a suspended account, a lost scope) before each event
//   is sent, and every second: a stream the API would refuse sends nothing more and ends within the second.
// - An account holds at most its plan's `event_streams` open streams (stream-slots.ts).
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import { AccessGuard } from '../auth/access.guard';
import type { AuthContext } from '../auth/auth-context';
import { CredentialsVersion } from '../auth/credentials-version';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { clientGoneSignal } from '../common/http/client-gone';
import { idFloor, idTime } from '../common/ids';
import { REDIS, type RedisClient } from '../common/redis/redis.module';
import { EventFeed, type FeedListener } from './event-feed';
import type { EventPayload } from './outbox.writer';
import { RENEW_MS, StreamSlots, type StreamSlot } from './stream-slots';
import { WebhooksRepository } from './webhooks.repository';

/** How often every open stream's credential is judged again (docs/api-decisions.md §3: refused "within one second"). */
const RECHECK_MS = 1000;
/** A comment line this often keeps proxies and the client from timing the connection out. */
const HEARTBEAT_MS = 15_000;
/** What the client is told to wait before reconnecting. */
const RETRY_MS = 2000;
const BATCH = 100;
/** A client this far behind (bytes queued for it) is cut off; it resumes from the outbox when it reconnects. */
const MAX_QUEUED_BYTES = 1024 * 1024;
/** Event ids sent on a connection are remembered this long, to skip the second publication of each. */
const REMEMBER_SENT_MS = 120_000;
/** A Last-Event-ID this far in the future (clock skew aside) names no event. */
const CLOCK_SKEW_MS = 60_000;
const EVENT_ID = /^evt_[0-9A-Za-z]{23}$/;

/** One open stream: its connection, its place, what it sent. */
class Connection implements FeedListener {
  private readonly sent = new Map<string, number>();
  /** Events waiting for the credential check that comes before each send (and, on a resume, for the outbox read). */
  private readonly queue: EventPayload[] = [];
  private resuming: boolean;
  private sending = false;
  private closed = false;
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(
    readonly request: FastifyRequest,
    private readonly raw: ServerResponse,
    readonly slot: StreamSlot,
    /** Only events after this id are sent (the resume point, or the moment of connection). */
    private readonly floor: string,
    resuming: boolean,
    /** Judges the stream's credential now; false (the stream has been ended) when the API would refuse it. */
    private readonly allowed: (connection: Connection) => Promise<boolean>,
    clientGone: AbortSignal,
  ) {
    this.resuming = resuming;
    this.done = new Promise((resolve) => (this.finish = resolve));
    raw.on('close', () => this.end());
    // The client half-closing its side is its leaving too (the socket is then closed: see client-gone.ts).
    if (clientGone.aborted) this.end();
    else clientGone.addEventListener('abort', () => this.end());
  }

  get open(): boolean {
    return !this.closed;
  }

  event(payload: EventPayload): void {
    if (this.closed || payload.id <= this.floor) return;
    this.queue.push(payload);
    if (!this.resuming) void this.flush();
  }

  lost(): void {
    this.end('the event feed was interrupted: reconnect with Last-Event-ID to resume');
  }

  /** Sends the outbox's events after the resume point, then the live ones that came meanwhile. */
  async resume(webhooks: WebhooksRepository): Promise<void> {
    let cursor = this.floor;
    for (;;) {
      const page = await webhooks.eventsAfter(this.slot.accountId, cursor, BATCH);
      if (this.closed || !(await this.allowed(this))) return;
      for (const event of page) {
        this.send(event.payload as EventPayload);
        // Outbox reads wait for a slow client instead of queueing the whole backlog in memory.
        if (this.raw.writableNeedDrain) await Promise.race([once(this.raw, 'drain'), this.done]);
        if (this.closed) return;
      }
      if (page.length < BATCH) break;
      cursor = page[page.length - 1].id;
    }
    this.resuming = false;
    await this.flush();
  }

  heartbeat(): void {
    if (!this.closed) this.raw.write(': keep-alive\n\n');
  }

  forgetOldSends(now: number): void {
    for (const [id, at] of this.sent) {
      if (at >= now - REMEMBER_SENT_MS) break; // insertion order: the rest are newer
      this.sent.delete(id);
    }
  }

  /** Ends the response (a comment line says why, where there is a reason the client should see). */
  end(reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    if (reason && this.raw.writable) this.raw.write(`: ${reason}\n\n`);
    // The connection goes with the stream, once the last bytes are out: a client that does not close its
    // side must not hold the server's shutdown for a keep-alive timeout.
    const socket = this.raw.socket;
    if (!this.raw.writableEnded) this.raw.end(() => socket?.destroy());
    else socket?.destroy();
    this.finish();
  }

  /** Sends what is queued, each batch only after the credential passed a check made after the batch arrived. */
  private async flush(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.queue.length && !this.closed) {
        const batch = this.queue.splice(0);
        if (!(await this.allowed(this))) return;
        for (const payload of batch) this.send(payload);
      }
    } finally {
      this.sending = false;
    }
  }

  private send(payload: EventPayload): void {
    if (this.closed || payload.id <= this.floor || this.sent.has(payload.id)) return;
    this.sent.set(payload.id, Date.now());
    this.raw.write(`id: ${payload.id}\nevent: ${payload.event}\ndata: ${JSON.stringify(payload)}\n\n`);
    if (this.raw.writableLength > MAX_QUEUED_BYTES)
      this.end('this client reads too slowly: reconnect with Last-Event-ID to resume');
  }
}

@Injectable()
export class EventStream implements OnModuleDestroy {
  private readonly logger = new Logger(EventStream.name);
  private readonly open = new Set<Connection>();
  private ticker?: NodeJS.Timeout;
  private ticking = false;
  private lastHeartbeat = 0;
  private lastRenewal = 0;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly feed: EventFeed,
    private readonly slots: StreamSlots,
    private readonly guard: AccessGuard,
    private readonly credentials: CredentialsVersion,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Streams until the client goes away, its credential is refused, or the API shuts down. */
  async serve(caller: AuthContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const resumeAfter = this.resumePoint(request.headers['last-event-id']);
    if (request.method === 'HEAD') {
      // The headers a GET would get, and the end: a HEAD has no body, so it must not stay open as a stream.
      void reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache');
      void reply.send();
      return;
    }
    const taken = await this.slots.take(caller.accountId, caller.plan.eventStreams);
    if ('held' in taken) {
      throw new ApiError('stream_limit_exceeded', {
        message: `Your plan allows ${caller.plan.eventStreams} open event streams and ${taken.held} are open. Close one, then connect again.`,
        details: { limit: caller.plan.eventStreams, open_streams: taken.held },
      });
    }
    const floor = resumeAfter ?? idFloor('evt', Date.now());
    const connection = new Connection(
      request,
      reply.raw,
      taken.slot,
      floor,
      resumeAfter !== null,
      (open) => this.allowed(open),
      clientGoneSignal(reply),
    );
    let unsubscribe: () => void;
    try {
      unsubscribe = await this.feed.subscribe(caller.accountId, connection);
    } catch (error) {
      // The caller gets the subscribe's error; a release that fails too (Redis down) costs nothing
      // lasting: the place's lease runs out within LEASE_MS (stream-slots.ts).
      await this.slots.release(taken.slot).catch(() => undefined);
      throw error;
    }

    const headers = {
      ...reply.getHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      // A stream is its connection's last response: when it ends, so does the connection (a shutdown waits for none).
      connection: 'close',
    };
    reply.hijack();
    reply.raw.writeHead(200, headers as Record<string, string>);
    reply.raw.write(`retry: ${RETRY_MS}\n: mediajobs event stream for ${caller.accountId}\n\n`);
    this.open.add(connection);
    this.ticker ??= setInterval(() => void this.tick(), RECHECK_MS).unref();
    try {
      if (resumeAfter !== null) await connection.resume(this.webhooks);
      await connection.done;
    } catch (error) {
      // The stream is already open: the client sees it end and reconnects with Last-Event-ID.
      this.logger.warn({ err: error, account_id: caller.accountId }, 'event stream stopped');
    } finally {
      connection.end();
      unsubscribe();
      this.open.delete(connection);
      if (!this.open.size && this.ticker) {
        clearInterval(this.ticker);
        this.ticker = undefined;
      }
      // The stream has ended either way; a place not given back (Redis down) lapses with its lease.
      await this.slots.release(taken.slot).catch(() => undefined);
    }
  }

  /** Ends every open stream, so the HTTP server can close (a stream never ends by itself). */
  onModuleDestroy(): void {
    for (const connection of this.open) connection.end();
  }

  /**
   * The event id to resume after, from Last-Event-ID; null without one. One that is no event id is a
   * 400, one older than the events kept a 410: a resume must never skip events without saying so.
   */
  private resumePoint(header: string | string[] | undefined): string | null {
    const value = Array.isArray(header) ? header[0] : header;
    if (value === undefined || value === '') return null;
    const createdAt = EVENT_ID.test(value) ? idTime('evt', value) : null;
    if (createdAt === null || createdAt > Date.now() + CLOCK_SKEW_MS) {
      throw new ApiError('invalid_parameter', {
        param: 'Last-Event-ID',
        message: 'Last-Event-ID must be the id of an event this stream sent (evt_…).',
      });
    }
    const keptFrom = Date.now() - this.config.jobRetentionDays * 86_400_000;
    if (createdAt < keptFrom) {
      throw new ApiError('resume_point_expired', {
        param: 'Last-Event-ID',
        details: { retention_days: this.config.jobRetentionDays, oldest_kept_at: new Date(keptFrom).toISOString() },
      });
    }
    return value;
  }

  /**
   * Once a second for all open streams: their credentials judged again (one Redis read of the
   * credentials version for all), a heartbeat and the renewal of the streams' places when due.
   */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const connections = [...this.open].filter((connection) => connection.open);
      const version = await this.currentVersion(connections);
      if (version === null) return;
      await Promise.all(connections.map((connection) => this.judge(connection, version)));
      const now = Date.now();
      if (now - this.lastHeartbeat >= HEARTBEAT_MS) {
        this.lastHeartbeat = now;
        for (const connection of connections) {
          connection.heartbeat();
          connection.forgetOldSends(now);
        }
      }
      if (now - this.lastRenewal >= RENEW_MS) {
        this.lastRenewal = now;
        // A failed renewal (Redis down) is tried again in RENEW_MS, well within the 60 s lease; the
        // streams' heartbeats must go on meanwhile.
        await this.slots.renew(connections.map((connection) => connection.slot)).catch(() => undefined);
      }
    } finally {
      this.ticking = false;
    }
  }

  /** The check before a send: the credential as it stands now (a key revoked a moment ago is refused). */
  private async allowed(connection: Connection): Promise<boolean> {
    const version = await this.currentVersion([connection]);
    return version !== null && (await this.judge(connection, version));
  }

  /**
   * The credentials version, which moves whenever a key, an account or a plan changes; null (and the
   * streams ended) when Redis does not answer: unable to tell whether a credential was revoked, the
   * streams stop sending (clients reconnect once Redis answers).
   */
  private async currentVersion(connections: Connection[]): Promise<string | null> {
    try {
      return (await this.redis.get(this.credentials.key)) ?? '';
    } catch {
      for (const connection of connections) connection.end('the service cannot check this stream’s credential now');
      return null;
    }
  }

  /** Whether the API would admit the stream's request now; ends the stream when it would not. */
  private async judge(connection: Connection, version: string): Promise<boolean> {
    const access = connection.request.routeOptions.config.access;
    try {
      if (access) await this.guard.recheck(connection.request, access, version);
      return connection.open;
    } catch (error) {
      const reason = error instanceof ApiError ? error.code : 'the credential could not be checked';
      connection.end(`stream ended: ${reason}`);
      return false;
    }
  }
}
