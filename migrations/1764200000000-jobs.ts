import type { MigrationInterface, QueryRunner } from 'typeorm';

// Jobs and their items, uploads, output assets, the idempotency store and the event outbox.
// A job's credit hold lives on the job row (billing_state 'authorised' = pending transfer) and is
// reflected in accounts.reserved_credits; settle or release flips it exactly once.
export class Jobs1764200000000 implements MigrationInterface {
  name = 'Jobs1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE uploads (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        storage_key text NOT NULL,
        size_bytes bigint NOT NULL,
        sha256 text NOT NULL,
        content_type text,
        probe jsonb,
        probe_error jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX uploads_expiry_idx ON uploads (expires_at) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE jobs (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        api text NOT NULL CHECK (api IN ('sdr2hdr', 'audio')),
        status text NOT NULL CHECK (status IN ('queued', 'processing', 'succeeded', 'partially_succeeded', 'failed', 'cancelled')),
        region text NOT NULL,
        output_options jsonb NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        estimated_credits bigint NOT NULL CHECK (estimated_credits >= 0),
        charged_credits bigint NOT NULL DEFAULT 0,
        billing_state text NOT NULL DEFAULT 'authorised' CHECK (billing_state IN ('authorised', 'settled', 'released')),
        estimated_seconds numeric NOT NULL DEFAULT 0,
        processed_seconds numeric NOT NULL DEFAULT 0,
        error jsonb,
        progress real NOT NULL DEFAULT 0,
        request_id text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        heartbeat_at timestamptz,
        CONSTRAINT jobs_charge_within_hold CHECK (charged_credits >= 0 AND charged_credits <= estimated_credits),
        CONSTRAINT jobs_terminal_billing CHECK (
          (status IN ('queued', 'processing') AND billing_state = 'authorised') OR
          (status IN ('succeeded', 'partially_succeeded') AND billing_state = 'settled') OR
          (status IN ('failed', 'cancelled') AND billing_state = 'released' AND charged_credits = 0))
      )`);
    await q.query(`CREATE INDEX jobs_account_idx ON jobs (account_id, api, id DESC)`);
    await q.query(`CREATE INDEX jobs_active_idx ON jobs (account_id) WHERE status IN ('queued', 'processing')`);
    await q.query(
      `CREATE INDEX jobs_open_idx ON jobs (region, status, created_at) WHERE status IN ('queued', 'processing')`,
    );
    await q.query(`CREATE INDEX jobs_finished_idx ON jobs (account_id, finished_at)`);
    await q.query(`
      CREATE TABLE job_items (
        job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        index integer NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'processing', 'succeeded', 'failed', 'cancelled')),
        source jsonb NOT NULL,
        duration_seconds numeric NOT NULL,
        width integer,
        height integer,
        estimated_credits bigint NOT NULL,
        charged_credits bigint NOT NULL DEFAULT 0,
        processed_seconds numeric NOT NULL DEFAULT 0,
        output jsonb,
        error jsonb,
        PRIMARY KEY (job_id, index),
        CHECK (charged_credits >= 0 AND charged_credits <= estimated_credits)
      )`);
    await q.query(`
      CREATE TABLE assets (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        item_index integer NOT NULL,
        storage_key text NOT NULL,
        size_bytes bigint NOT NULL,
        container text NOT NULL,
        content_type text NOT NULL,
        media jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX assets_expiry_idx ON assets (expires_at) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE idempotency_keys (
        account_id text NOT NULL REFERENCES accounts (id),
        key text NOT NULL,
        request_hash text NOT NULL,
        state text NOT NULL CHECK (state IN ('in_flight', 'done')),
        response_status integer,
        response_body jsonb,
        response_headers jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_expiry_idx ON idempotency_keys (expires_at)`);
    await q.query(`
      CREATE TABLE outbox_events (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        job_id text NOT NULL,
        event text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        dispatched_at timestamptz,
        UNIQUE (job_id, event)
      )`);
    await q.query(`CREATE INDEX outbox_undispatched_idx ON outbox_events (created_at) WHERE dispatched_at IS NULL`);
    await q.query(`CREATE INDEX outbox_account_idx ON outbox_events (account_id, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['outbox_events', 'idempotency_keys', 'assets', 'job_items', 'jobs', 'uploads']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
