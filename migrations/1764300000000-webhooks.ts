import type { MigrationInterface, QueryRunner } from 'typeorm';

// Webhook endpoints, deliveries (one per event × endpoint, plus manual redeliveries) and the log of
// every attempt. The database is the source of truth for what is still to be sent: a delivery is
// `pending` with a `next_attempt_at` until it is `delivered` or `failed`, whatever Redis holds.
export class Webhooks1764300000000 implements MigrationInterface {
  name = 'Webhooks1764300000000';

  async up(q: QueryRunner): Promise<void> {
    // The secret is stored as issued (whsec_…): HMAC signing needs it in the clear.
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        url text NOT NULL,
        events text[] NOT NULL CHECK (cardinality(events) > 0),
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        disabled_at timestamptz,
        disabled_reason text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, id DESC)`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        event_id text NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
        endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        origin text NOT NULL CHECK (origin IN ('outbox', 'redelivery')),
        state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_error text,
        lease_token text,
        lease_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
      )`);
    // The relay may run twice for one event (two workers, a retried transaction): one automatic delivery per endpoint.
    await q.query(
      `CREATE UNIQUE INDEX webhook_deliveries_once_idx ON webhook_deliveries (event_id, endpoint_id) WHERE origin = 'outbox'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);
    await q.query(`
      CREATE TABLE webhook_attempts (
        delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        attempted_at timestamptz NOT NULL,
        status_code integer,
        duration_ms integer NOT NULL,
        error text,
        PRIMARY KEY (delivery_id, attempt)
      )`);
    await q.query(`CREATE INDEX outbox_account_event_idx ON outbox_events (account_id, event, id DESC)`);
    await q.query(`CREATE INDEX outbox_job_idx ON outbox_events (job_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outbox_job_idx`);
    await q.query(`DROP INDEX outbox_account_event_idx`);
    for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_endpoints']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
