import type { MigrationInterface, QueryRunner } from 'typeorm';

// People who sign in to the dashboard: members of an account with a role, their one-time password
// links (invitations and resets) and their sessions. Secrets are stored only as SHA-256 hashes
// (link and session tokens) or as a memory-hard KDF output (passwords). Also: webhook test events,
// which belong to no job.
export class Members1764600000000 implements MigrationInterface {
  name = 'Members1764600000000';

  async up(q: QueryRunner): Promise<void> {
    // One person, one account: the email (stored lower-cased) is unique across the service, so
    // signing in needs no account picker. No password until the invitation is accepted.
    await q.query(`
      CREATE TABLE members (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        email text NOT NULL UNIQUE CHECK (email = lower(email)),
        role text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
        password_hash text,
        invited_at timestamptz NOT NULL DEFAULT now(),
        joined_at timestamptz,
        last_sign_in_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((password_hash IS NULL) = (joined_at IS NULL))
      )`);
    await q.query(`CREATE INDEX members_account_idx ON members (account_id, id)`);
    await q.query(`
      CREATE TABLE password_links (
        token_hash bytea PRIMARY KEY,
        member_id text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('invite', 'reset')),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX password_links_member_idx ON password_links (member_id)`);
    await q.query(`
      CREATE TABLE member_sessions (
        id text PRIMARY KEY,
        member_id text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
        token_hash bytea NOT NULL UNIQUE,
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX member_sessions_member_idx ON member_sessions (member_id) WHERE revoked_at IS NULL`);

    // "Send a test event": an event of no job, delivered to the one endpoint that asked for it.
    await q.query(`ALTER TABLE outbox_events ALTER COLUMN job_id DROP NOT NULL`);
    await q.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_origin_check`);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_origin_check CHECK (origin IN ('outbox', 'redelivery', 'test'))`,
    );
    // The daily charges chart reads captures per day.
    await q.query(
      `CREATE INDEX credit_ledger_captures_idx ON credit_ledger (account_id, created_at) WHERE kind = 'capture'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX credit_ledger_captures_idx`);
    await q.query(`DELETE FROM webhook_deliveries WHERE origin = 'test'`);
    await q.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_origin_check`);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_origin_check CHECK (origin IN ('outbox', 'redelivery'))`,
    );
    await q.query(`DELETE FROM outbox_events WHERE job_id IS NULL`);
    await q.query(`ALTER TABLE outbox_events ALTER COLUMN job_id SET NOT NULL`);
    await q.query(`DROP TABLE member_sessions`);
    await q.query(`DROP TABLE password_links`);
    await q.query(`DROP TABLE members`);
  }
}
