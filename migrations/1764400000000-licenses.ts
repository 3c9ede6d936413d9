import type { MigrationInterface, QueryRunner } from 'typeorm';

// Plugin licences (docs/api-decisions.md §7) and their device activations. A key is stored only as its SHA-256
// plus a visible prefix. The partial unique index makes "one active seat per device" a database
// fact; the seat count itself is enforced under a row lock on the licence (see LicenseService).
export class Licenses1764400000000 implements MigrationInterface {
  name = 'Licenses1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE licenses (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        key_hash bytea NOT NULL UNIQUE,
        key_prefix text NOT NULL,
        plan text NOT NULL DEFAULT 'standard',
        max_devices integer NOT NULL CHECK (max_devices >= 1),
        expires_at timestamptz NOT NULL,
        offline_grace_seconds integer NOT NULL DEFAULT 604800 CHECK (offline_grace_seconds >= 1),
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX licenses_account_idx ON licenses (account_id, id DESC)`);
    await q.query(`
      CREATE TABLE license_activations (
        id text PRIMARY KEY,
        license_id text NOT NULL REFERENCES licenses (id) ON DELETE CASCADE,
        device_id text NOT NULL,
        device_name text,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        deactivated_at timestamptz
      )`);
    // Also serves "count the licence's active seats" (its leading column is license_id).
    await q.query(`
      CREATE UNIQUE INDEX license_activations_active_device
        ON license_activations (license_id, device_id) WHERE deactivated_at IS NULL`);
    await q.query(
      `CREATE INDEX license_activations_device_idx ON license_activations (license_id, device_id, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE license_activations`);
    await q.query(`DROP TABLE licenses`);
  }
}
