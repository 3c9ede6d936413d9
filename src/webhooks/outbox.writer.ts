import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { afterCommit } from '../common/database/after-commit';
import type { ErrorObject } from '../common/errors';
import { newId } from '../common/ids';
import { REDIS, type RedisClient } from '../common/redis/redis.module';
import { publishEvents } from './event-channel';
import type { EventItem, EventPayload, JobEvent } from './event-payload';

// The event types live in event-payload.ts (event-channel.ts needs them and this file needs it).
export {
  JOB_EVENTS,
  TEST_EVENT,
  type EventItem,
  type EventPayload,
  type EventType,
  type JobEvent,
} from './event-payload';

/**
 * Writes a job's terminal event to the outbox inside the transaction that ends the job: the event
 * exists exactly when the job ended (no lost event, none invented by a rolled-back transaction).
 * `data.error` is the very object stored on the job, so the two are identical. Once it commits, the
 * event is published to the account's open event streams (event-channel.ts), as is every other event
 * written to the outbox (announce).
 */
@Injectable()
export class OutboxWriter {
  private readonly logger = new Logger(OutboxWriter.name);

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async write(
    manager: EntityManager,
    event: { accountId: string; jobId: string; event: JobEvent; error: ErrorObject | null; items?: EventItem[] },
  ): Promise<EventPayload> {
    const payload: EventPayload = {
      id: newId('evt'),
      event: event.event,
      created_at: new Date().toISOString(),
      data: { job: { job_id: event.jobId }, ...(event.items ? { items: event.items } : {}), error: event.error },
    };
    const inserted = (await manager.query(
      `INSERT INTO outbox_events (id, account_id, job_id, event, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (job_id, event) DO NOTHING RETURNING id`,
      [payload.id, event.accountId, event.jobId, event.event, payload, payload.created_at],
    )) as unknown[];
    if (inserted.length) afterCommit(manager, () => this.announce(event.accountId, payload));
    return payload;
  }

  /**
   * Publishes a committed event to the account's open event streams; best effort. A job event is
   * published again by the relay; an event the relay skips (`webhook.test`, written with its one
   * delivery) reaches a stream that missed it when the stream resumes with Last-Event-ID.
   */
  announce(accountId: string, payload: EventPayload): void {
    publishEvents(this.redis, this.config.redisPrefix, [{ accountId, payload }]).catch((error: unknown) =>
      this.logger.warn({ err: error, event_id: payload.id }, 'event not published to the open event streams'),
    );
  }
}
