// The worker's SQL of webhooks: relaying the outbox into deliveries, finding due ones, leasing a delivery
// to one attempt, logging the attempt and its outcome, and purging old events. The API's reads and
// writes of endpoints and events are webhooks.repository.ts.
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';
import { newId } from '../common/ids';
import type { EventPayload } from './outbox.writer';

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

@Injectable()
export class WebhookDeliveryRepository {
  constructor(private readonly db: DataSource) {}

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
