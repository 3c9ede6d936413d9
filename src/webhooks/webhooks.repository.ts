// All SQL of webhooks: the endpoint registry, the event log (outbox_events), deliveries and attempts.
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

/** A delivery leased to one worker for one attempt, with what the attempt needs. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  event_id: string;
  endpoint_id: string;
  url: string;
  secret: string;
  /** The pre-rotation secret while its overlap lasts, else null. */
  previous_secret: string | null;
  disabled: boolean;
  payload: EventPayload;
  /** When the event was written (its delivery lag is measured from here). */
  event_created_at: Date;
}

/** A delivery that is due and should be on the queue; `attempts` names its queue job. */
export interface DueDelivery {
  id: string;
  attempts: number;
}

export type AttemptOutcome = { state: 'delivered' } | { state: 'failed' } | { state: 'pending'; delayMs: number };

/** An attempt's error in the log until its outcome is written (and for good when it never is). */
export const UNRECORDED_OUTCOME =
  'No outcome recorded: the attempt is in flight, or its worker stopped or lost its database during it (the endpoint may have received it).';

/** The outcome of attempt number `attempt` (its number from startAttempt). */
export interface AttemptRecord {
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
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

  // ---- worker: relay, scheduling, attempts ----

  /**
   * Moves up to `limit` undispatched outbox events into deliveries (first attempt due after
   * `firstDelayMs`), one per matching enabled endpoint of the event's account, and marks them
   * dispatched — all in one transaction; returns the events it took (for the event streams).
   * SKIP LOCKED lets several workers relay side by side; the unique index makes a repeated relay a no-op.
   */
  relayOutbox(limit: number, firstDelayMs: number): Promise<{ accountId: string; payload: EventPayload }[]> {
    return this.db.transaction(async (manager: EntityManager) => {
      const events = await rows<{ id: string; account_id: string; payload: EventPayload }>(
        manager,
        `SELECT id, account_id, payload FROM outbox_events WHERE dispatched_at IS NULL ORDER BY created_at LIMIT $1
           FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      if (!events.length) return [];
      const eventIds = events.map((event) => event.id);
      const pairs = await rows<{ event_id: string; endpoint_id: string }>(
        manager,
        `SELECT o.id AS event_id, e.id AS endpoint_id
           FROM outbox_events o JOIN webhook_endpoints e
             ON e.account_id = o.account_id AND e.disabled_at IS NULL AND o.event = ANY (e.events)
          WHERE o.id = ANY ($1)`,
        [eventIds],
      );
      if (pairs.length) {
        await manager.query(
          `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, origin, state, next_attempt_at)
           SELECT id, event_id, endpoint_id, 'outbox', 'pending', now() + $4::double precision * interval '1 millisecond'
             FROM unnest($1::text[], $2::text[], $3::text[]) AS t (id, event_id, endpoint_id)
           ON CONFLICT (event_id, endpoint_id) WHERE origin = 'outbox' DO NOTHING`,
          [
            pairs.map(() => newId('dlv')),
            pairs.map((pair) => pair.event_id),
            pairs.map((pair) => pair.endpoint_id),
            firstDelayMs,
          ],
        );
      }
      await manager.query(`UPDATE outbox_events SET dispatched_at = now() WHERE id = ANY ($1)`, [eventIds]);
      return events.map((event) => ({ accountId: event.account_id, payload: event.payload }));
    });
  }

  /** Pending deliveries whose time has come and that no worker holds (lost from Redis, or never queued). */
  dueDeliveries(limit: number): Promise<DueDelivery[]> {
    return rows<DueDelivery>(
      this.db,
      `SELECT id, attempts FROM webhook_deliveries
        WHERE state = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt_at LIMIT $1`,
      [limit],
    );
  }

  /**
   * Leases a due delivery to one attempt for `leaseSeconds`. Null when it is not due, already
   * finished, or held by another worker — the caller then has nothing to do. A worker that dies
   * mid-attempt loses the lease when it expires, and the delivery is due again.
   */
  claim(id: string, token: string, leaseSeconds: number): Promise<ClaimedDelivery | null> {
    return row<ClaimedDelivery>(
      this.db,
      `WITH claimed AS (
         UPDATE webhook_deliveries SET lease_token = $2, lease_until = now() + make_interval(secs => $3)
          WHERE id = $1 AND state = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
          RETURNING id, attempts, event_id, endpoint_id)
       SELECT c.id, c.attempts, c.event_id, c.endpoint_id, e.url, e.secret,
              CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret,
              e.disabled_at IS NOT NULL AS disabled, o.payload, o.created_at AS event_created_at
         FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN outbox_events o ON o.id = c.event_id`,
      [id, token, leaseSeconds],
    );
  }

  /**
   * Deletes up to `limit` events older than the job retention once nothing is pending for them
   * (deliveries and attempts go too, by cascade); returns how many. One batch of the paced purge
   * (src/common/upkeep-batches.ts): picked by outbox_dispatched_age_idx, rows another transaction
   * holds are skipped, not waited for.
   */
  async purgeEvents(retentionDays: number, limit: number): Promise<number> {
    const result: [unknown[], number] = await this.db.query(
      `DELETE FROM outbox_events
        WHERE id IN (SELECT o.id FROM outbox_events o
                      WHERE o.created_at < now() - make_interval(days => $1) AND o.dispatched_at IS NOT NULL
                        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = o.id AND d.state = 'pending')
                      ORDER BY o.created_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED)`,
      [retentionDays, limit],
    );
    return result[1];
  }

  /** Gives a leased delivery back untouched (the worker is stopping): it is due again at once. */
  async release(id: string, token: string): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET lease_token = NULL, lease_until = NULL WHERE id = $1 AND lease_token = $2`,
      [id, token],
    );
  }

  /** Ends a leased delivery without an attempt (its endpoint was disabled meanwhile). */
  async abandon(id: string, token: string, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries
          SET state = 'failed', next_attempt_at = NULL, finished_at = now(), last_error = $3, lease_token = NULL, lease_until = NULL
        WHERE id = $1 AND lease_token = $2`,
      [id, token, reason],
    );
  }

  /**
   * Logs an attempt as begun, before its request goes out, while this worker holds the lease: the
   * delivery log then counts every request a receiver may have got, even one whose outcome is never
   * written (the worker died, or lost PostgreSQL, after sending). Its outcome reads UNRECORDED_OUTCOME
   * until recordAttempt writes it. The attempt's number; null when the lease was lost meanwhile.
   */
  async startAttempt(id: string, token: string, attemptedAt: Date): Promise<number | null> {
    const started = await row<{ attempt: number }>(
      this.db,
      `WITH started AS (
         UPDATE webhook_deliveries SET attempts = attempts + 1
          WHERE id = $1 AND lease_token = $2 AND state = 'pending'
          RETURNING id, attempts)
       INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms, error)
       SELECT id, attempts, $3, NULL, 0, $4 FROM started
       RETURNING attempt`,
      [id, token, attemptedAt, UNRECORDED_OUTCOME],
    );
    return started?.attempt ?? null;
  }

  /**
   * Writes the outcome of an attempt begun by startAttempt and moves the delivery on, in one
   * transaction; the delivery only while this worker still holds the lease (false otherwise: the lease
   * expired and the delivery is left to its new holder). `disableEndpoint` (410 Gone) also disables the endpoint.
   */
  recordAttempt(
    id: string,
    token: string,
    attempt: AttemptRecord,
    outcome: AttemptOutcome,
    disableEndpoint?: string,
  ): Promise<boolean> {
    return this.db.transaction(async (manager: EntityManager) => {
      await manager.query(
        `UPDATE webhook_attempts SET status_code = $3, duration_ms = $4, error = $5 WHERE delivery_id = $1 AND attempt = $2`,
        [id, attempt.attempt, attempt.statusCode, attempt.durationMs, attempt.error],
      );
      const updated = await row<{ endpoint_id: string }>(
        manager,
        `UPDATE webhook_deliveries
            SET state = $3, last_error = $4, lease_token = NULL, lease_until = NULL,
                next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $5::double precision * interval '1 millisecond' END,
                finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
          WHERE id = $1 AND lease_token = $2 AND state = 'pending'
          RETURNING endpoint_id`,
        [id, token, outcome.state, attempt.error, outcome.state === 'pending' ? outcome.delayMs : 0],
      );
      if (!updated) return false;
      if (disableEndpoint) {
        await manager.query(
          `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL`,
          [updated.endpoint_id, disableEndpoint],
        );
        // Nothing more goes to a gone endpoint: its other waiting deliveries end now, not at their next attempt.
        await manager.query(
          `UPDATE webhook_deliveries
              SET state = 'failed', next_attempt_at = NULL, finished_at = now(), last_error = 'The endpoint was disabled.'
            WHERE endpoint_id = $1 AND state = 'pending' AND lease_token IS NULL`,
          [updated.endpoint_id],
        );
      }
      return true;
    });
  }
}
