// One Redis subscriber per API instance, shared by every open event stream on it: a stream costs a
// place in a set here, not a query or a connection. It subscribes to an account's channel
// (event-channel.ts) while at least one stream of that account is open. Pub/sub keeps nothing for a
// subscriber that is away, so when the subscriber's connection drops every stream is told (`lost`) and
// ends: its client reconnects with Last-Event-ID and catches up from the database.
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { createRedis, type RedisClient } from '../common/redis/redis.module';
import { eventChannel } from './event-channel';
import type { EventPayload } from './outbox.writer';

export interface FeedListener {
  event(payload: EventPayload): void;
  /** The feed may have missed events: the stream must end (its client resumes from the database). */
  lost(): void;
}

interface Channel {
  listeners: Set<FeedListener>;
  /** Settles when Redis confirmed the subscription: events published after it reach the listeners. */
  subscribed: Promise<void>;
}

/** How long a stream waits for the subscriber's connection before it is refused (503). */
const CONNECT_TIMEOUT_MS = 2500;

@Injectable()
export class EventFeed implements OnModuleDestroy {
  private readonly logger = new Logger(EventFeed.name);
  private subscriber?: Promise<RedisClient>;
  private readonly channels = new Map<string, Channel>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Starts passing the account's events to `listener`; resolves once they flow. Returns the unsubscribe. */
  async subscribe(accountId: string, listener: FeedListener): Promise<() => void> {
    const subscriber = await this.connection();
    const name = eventChannel(this.config.redisPrefix, accountId);
    let channel = this.channels.get(name);
    if (!channel) {
      const created: Channel = { listeners: new Set(), subscribed: subscriber.subscribe(name).then(() => undefined) };
      channel = created;
      this.channels.set(name, created);
      created.subscribed.catch(() => {
        if (this.channels.get(name) === created) this.channels.delete(name);
      });
    }
    channel.listeners.add(listener);
    try {
      await channel.subscribed;
    } catch (error) {
      channel.listeners.delete(listener);
      throw unavailable(error);
    }
    const current = channel;
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size || this.channels.get(name) !== current) return;
      this.channels.delete(name);
      // No listener is left for the channel: a message still arriving is dropped (above), and a lost
      // connection takes the subscription with it, so a failed unsubscribe needs nothing more.
      subscriber.unsubscribe(name).catch(() => undefined);
    };
  }

  onModuleDestroy(): void {
    // Shutting down: a connection that never opened (its error was the caller's) has nothing to close.
    void this.subscriber?.then((client) => client.disconnect()).catch(() => undefined);
    this.subscriber = undefined;
  }

  private connection(): Promise<RedisClient> {
    if (this.subscriber) return this.subscriber;
    const pending: Promise<RedisClient> = this.connect(() => {
      if (this.subscriber === pending) this.subscriber = undefined;
    }).catch((error: unknown) => {
      if (this.subscriber === pending) this.subscriber = undefined;
      throw unavailable(error);
    });
    this.subscriber = pending;
    return pending;
  }

  /** A subscriber connection; `closed` runs when it drops (never to be reused). */
  private async connect(closed: () => void): Promise<RedisClient> {
    const client = createRedis(this.config, 'events');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no connection to Redis')), CONNECT_TIMEOUT_MS);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    }).catch((error: unknown) => {
      client.disconnect();
      throw error;
    });
    client.on('message', (name: string, message: string) => {
      const channel = this.channels.get(name);
      if (!channel) return;
      let payload: EventPayload;
      try {
        payload = JSON.parse(message) as EventPayload;
      } catch {
        return;
      }
      for (const listener of channel.listeners) listener.event(payload);
    });
    // Whatever was published while the connection was down is gone for this subscriber: every stream
    // ends and resumes; the next stream opens a fresh connection.
    client.once('close', () => {
      client.disconnect();
      closed();
      const listeners = [...this.channels.values()].flatMap((channel) => [...channel.listeners]);
      this.channels.clear();
      if (listeners.length) this.logger.warn(`event feed connection lost; ending ${listeners.length} stream(s)`);
      for (const listener of listeners) listener.lost();
    });
    return client;
  }
}

function unavailable(error: unknown): ApiError {
  return error instanceof ApiError
    ? error
    : new ApiError('service_unavailable', {
        message: 'The event stream is unavailable right now. Retry with backoff.',
      });
}
