import type { MigrationInterface, QueryRunner } from 'typeorm';

// Accounts, plans (seeded with docs/api-decisions.md §3's defaults), API keys, the credit ledger, operator settings
// and the content block list. Money invariants live in CHECK constraints so that no code path can
// overspend, even a wrong one.
export class Foundation1764100000000 implements MigrationInterface {
  name = 'Foundation1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE plans (
        id text PRIMARY KEY,
        requests_per_second integer NOT NULL CHECK (requests_per_second > 0),
        concurrent_jobs integer NOT NULL CHECK (concurrent_jobs > 0),
        processing_minutes_per_month integer CHECK (processing_minutes_per_month IS NULL OR processing_minutes_per_month >= 0),
        apis text[] NOT NULL,
        max_output_height integer NOT NULL,
        usd_per_credit numeric(10, 4) NOT NULL CHECK (usd_per_credit > 0)
      )`);
    await q.query(`
      INSERT INTO plans (id, requests_per_second, concurrent_jobs, processing_minutes_per_month, apis, max_output_height, usd_per_credit) VALUES
        ('free',       5,    1,  60,   '{sdr2hdr}',       1080, 0.010),
        ('starter',    20,   3,  600,  '{sdr2hdr,audio}', 1080, 0.008),
        ('pro',        100,  10, 6000, '{sdr2hdr,audio}', 2160, 0.006),
        ('enterprise', 1000, 50, NULL, '{sdr2hdr,audio}', 2160, 0.005)`);
    await q.query(`
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        name text NOT NULL,
        plan_id text NOT NULL REFERENCES plans (id),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        subscription_status text NOT NULL DEFAULT 'active' CHECK (subscription_status IN ('active', 'payment_failed', 'inactive')),
        spend_limit_usd numeric(12, 2) CHECK (spend_limit_usd IS NULL OR spend_limit_usd >= 0),
        balance_credits bigint NOT NULL DEFAULT 0,
        reserved_credits bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT accounts_reserved_not_negative CHECK (reserved_credits >= 0),
        CONSTRAINT accounts_available_not_negative CHECK (balance_credits - reserved_credits >= 0)
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        prefix text NOT NULL,
        key_hash bytea NOT NULL UNIQUE,
        scopes text[] NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE credit_ledger (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        kind text NOT NULL CHECK (kind IN ('grant', 'authorise', 'capture', 'release')),
        credits bigint NOT NULL CHECK (credits >= 0),
        job_id text,
        reason text,
        balance_after bigint NOT NULL,
        reserved_after bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX credit_ledger_account_idx ON credit_ledger (account_id, id DESC)`);
    await q.query(`
      CREATE TABLE system_settings (
        key text PRIMARY KEY,
        value jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE blocked_content (
        sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
        reason text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['blocked_content', 'system_settings', 'credit_ledger', 'api_keys', 'accounts', 'plans']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
