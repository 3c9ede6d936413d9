// The API's SQL of webhooks: the endpoint registry, the event log (outbox_events) as the account reads it,
// the delivery log, redeliveries and test events (which the worker's pump then sends). The worker's side —
// relaying the outbox, leasing deliveries, logging attempts — is webhook-delivery.repository.ts.
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';
import { newId } from '../common/ids';
import { TEST_EVENT, type EventPayload, type EventType, type JobEvent } from './outbox.writer';

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  events: JobEvent[];
  previous_secret_expires_at: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
}

export interface EventRow {
  id: string;
  job_id: string | null;
  event: EventType;
  payload: EventPayload;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface AttemptRow {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event: EventType;
  origin: 'outbox' | 'redelivery' | 'test';
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  created_at: Date;
  finished_at: Date | null;
  attempt_log: AttemptRow[];
}

const ENDPOINT_COLUMNS = `id, account_id, url, events, previous_secret_expires_at, disabled_at, disabled_reason, created_at`;
const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, o.event, d.origin, d.state, d.attempts, d.next_attempt_at, d.last_error,
  d.created_at, d.finished_at,
  COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'attempted_at', a.attempted_at, 'status_code', a.status_code,
                                              'duration_ms', a.duration_ms, 'error', a.error) ORDER BY a.attempt)
              FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempt_log`;

@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: DataSource) {}

  /** For the metrics: deliveries waiting for a (re)try (the due index) and disabled endpoints. */
  async backlog(): Promise<{ pending: number; endpointsDisabled: number }> {
    const found = await row<{ pending: number; disabled: number }>(
      this.db,
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending')::int AS pending,
              (SELECT count(*) FROM webhook_endpoints WHERE disabled_at IS NOT NULL)::int AS disabled`,
    );
    return { pending: found?.pending ?? 0, endpointsDisabled: found?.disabled ?? 0 };
  }

  // ---- endpoints ----

  /**
   * Registers the endpoint unless the account already has one with this URL and this event filter, or has
   * as many as its plan allows. Registrations of one account queue on a transaction-scoped advisory lock,
   * so two at once cannot both pass either check (nor does the lock hold anything else up).
   */
  async insertEndpoint(endpoint: {
    id: string;
    accountId: string;
    url: string;
    events: JobEvent[];
    secret: string;
  }): Promise<{ created: EndpointRow } | { duplicateOf: string } | { limit: number; used: number }> {
    return this.db.transaction(async (manager: EntityManager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1, 0))`, [
        endpoint.accountId,
      ]);
      // The plan as stored now (not the credential's cached view): the number the error reports.
      const held = (await row<{ limit: number; used: number; duplicate: string | null }>(
        manager,
        `SELECT p.webhook_endpoints AS limit,
                (SELECT count(*)::int FROM webhook_endpoints w WHERE w.account_id = a.id) AS used,
                (SELECT w.id FROM webhook_endpoints w
                  WHERE w.account_id = a.id AND w.url = $2 AND w.events = $3::text[] ORDER BY w.id LIMIT 1) AS duplicate
           FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = $1`,
        [endpoint.accountId, endpoint.url, endpoint.events],
      ))!;
      if (held.duplicate) return { duplicateOf: held.duplicate };
      if (held.used >= held.limit) return { limit: held.limit, used: held.used };
      const created = (await row<EndpointRow>(
        manager,
        `INSERT INTO webhook_endpoints (id, account_id, url, events, secret) VALUES ($1, $2, $3, $4, $5) RETURNING ${ENDPOINT_COLUMNS}`,
        [endpoint.id, endpoint.accountId, endpoint.url, endpoint.events, endpoint.secret],
      ))!;
      return { created };
    });
  }

  listEndpoints(accountId: string, limit: number, startingAfter?: string): Promise<EndpointRow[]> {
    return rows<EndpointRow>(
      this.db,
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
      [accountId, startingAfter ?? null, limit],
    );
  }

  /** The endpoint as its owner sees it; another account's endpoint does not exist for the caller. */
  findEndpoint(accountId: string, id: string): Promise<EndpointRow | null> {
    return row<EndpointRow>(
      this.db,
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND account_id = $2`,
      [id, accountId],
    );
  }

  /** Deleting an endpoint drops its deliveries too (cascade): nothing more is sent to it. */
  deleteEndpoint(accountId: string, id: string): Promise<EndpointRow | null> {
    return row<EndpointRow>(
      this.db,
      `DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [id, accountId],
    );
  }

  /** The current secret becomes the previous one for `overlapSeconds`; an older previous one is dropped. */
  rotateSecret(accountId: string, id: string, secret: string, overlapSeconds: number): Promise<EndpointRow | null> {
    return row<EndpointRow>(
      this.db,
      `UPDATE webhook_endpoints
          SET previous_secret = secret, previous_secret_expires_at = now() + make_interval(secs => $4), secret = $3
        WHERE id = $1 AND account_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [id, accountId, secret, overlapSeconds],
    );
  }

  /** Enabled endpoints of the account subscribed to `event`. */
  async subscribedEndpointIds(accountId: string, event: EventType): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.db,
      `SELECT id FROM webhook_endpoints WHERE account_id = $1 AND disabled_at IS NULL AND $2 = ANY (events) ORDER BY id`,
      [accountId, event],
    );
    return found.map((endpoint) => endpoint.id);
  }

  // ---- events ----

  listEvents(
    accountId: string,
    options: { limit: number; startingAfter?: string; type?: EventType; jobId?: string; retentionDays: number },
  ): Promise<EventRow[]> {
    return rows<EventRow>(
      this.db,
      `SELECT id, job_id, event, payload FROM outbox_events
        WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) AND ($3::text IS NULL OR event = $3) AND ($4::text IS NULL OR job_id = $4)
          AND created_at > now() - make_interval(days => $5)
        ORDER BY id DESC LIMIT $6`,
      [
        accountId,
        options.startingAfter ?? null,
        options.type ?? null,
        options.jobId ?? null,
        options.retentionDays,
        options.limit,
      ],
    );
  }

  /** The account's events with ids after `afterId`, oldest first (ids sort by creation time). */
  eventsAfter(
    accountId: string,
    afterId: string,
    limit: number,
  ): Promise<Pick<EventRow, 'id' | 'event' | 'payload'>[]> {
    return rows(
      this.db,
      `SELECT id, event, payload FROM outbox_events WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [accountId, afterId, limit],
    );
  }

  findEvent(accountId: string, id: string, retentionDays: number): Promise<EventRow | null> {
    return row<EventRow>(
      this.db,
      `SELECT id, job_id, event, payload FROM outbox_events
        WHERE id = $1 AND account_id = $2 AND created_at > now() - make_interval(days => $3)`,
      [id, accountId, retentionDays],
    );
  }

  // ---- deliveries ----

  listDeliveries(
    endpointId: string,
    options: { limit: number; startingAfter?: string; eventId?: string },
  ): Promise<DeliveryRow[]> {
    return rows<DeliveryRow>(
      this.db,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.event_id
        WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.id < $2) AND ($3::text IS NULL OR d.event_id = $3)
        ORDER BY d.id DESC LIMIT $4`,
      [endpointId, options.startingAfter ?? null, options.eventId ?? null, options.limit],
    );
  }

  /** New deliveries of an event, due now; the worker's pump puts them on the queue. */
  async insertRedeliveries(eventId: string, endpointIds: string[]): Promise<DeliveryRow[]> {
    if (!endpointIds.length) return [];
    const ids = endpointIds.map(() => newId('dlv'));
    await this.db.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, origin, state, next_attempt_at)
       SELECT id, $1, endpoint_id, 'redelivery', 'pending', now() FROM unnest($2::text[], $3::text[]) AS t (id, endpoint_id)`,
      [eventId, ids, endpointIds],
    );
    return rows<DeliveryRow>(
      this.db,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.event_id WHERE d.id = ANY ($1) ORDER BY d.id`,
      [ids],
    );
  }

  /**
   * A test event and its one delivery, due now, to one endpoint. The event is born dispatched, so
   * the relay never sends it to the account's other endpoints.
   */
  async insertTestEvent(accountId: string, endpointId: string, payload: EventPayload): Promise<DeliveryRow> {
    const deliveryId = newId('dlv');
    await this.db.transaction(async (manager: EntityManager) => {
      await manager.query(
        `INSERT INTO outbox_events (id, account_id, job_id, event, payload, created_at, dispatched_at)
         VALUES ($1, $2, NULL, $3, $4, $5, now())`,
        [payload.id, accountId, TEST_EVENT, payload, payload.created_at],
      );
      await manager.query(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, origin, state, next_attempt_at)
         VALUES ($1, $2, $3, 'test', 'pending', now())`,
        [deliveryId, payload.id, endpointId],
      );
    });
    return (await row<DeliveryRow>(
      this.db,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.event_id WHERE d.id = $1`,
      [deliveryId],
    ))!;
  }
}
