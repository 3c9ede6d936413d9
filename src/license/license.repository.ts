import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { row, rows } from '../common/database/sql';

export interface LicenseRow {
  id: string;
  account_id: string;
  key_prefix: string;
  plan: string;
  max_devices: number;
  expires_at: Date;
  offline_grace_seconds: number;
  revoked_at: Date | null;
  created_at: Date;
}

export interface ActivationRow {
  id: string;
  license_id: string;
  device_id: string;
  device_name: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
  deactivated_at: Date | null;
}

const LICENSE_COLUMNS =
  'id, account_id, key_prefix, plan, max_devices, expires_at, offline_grace_seconds, revoked_at, created_at';
const ACTIVATION_COLUMNS = 'id, license_id, device_id, device_name, first_seen_at, last_seen_at, deactivated_at';

export interface NewLicense {
  id: string;
  accountId: string;
  keyHash: Buffer;
  keyPrefix: string;
  plan: string;
  maxDevices: number;
  expiresAt: Date;
  offlineGraceSeconds: number;
}

@Injectable()
export class LicenseRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async accountExists(accountId: string): Promise<boolean> {
    return (await row(this.db, 'SELECT 1 FROM accounts WHERE id = $1', [accountId])) !== null;
  }

  async insertLicense(license: NewLicense): Promise<LicenseRow> {
    const inserted = await row<LicenseRow>(
      this.db,
      `INSERT INTO licenses (id, account_id, key_hash, key_prefix, plan, max_devices, expires_at, offline_grace_seconds)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${LICENSE_COLUMNS}`,
      [
        license.id,
        license.accountId,
        license.keyHash,
        license.keyPrefix,
        license.plan,
        license.maxDevices,
        license.expiresAt,
        license.offlineGraceSeconds,
      ],
    );
    return inserted!;
  }

  findLicense(id: string, manager: EntityManager = this.db.manager): Promise<LicenseRow | null> {
    return row<LicenseRow>(manager, `SELECT ${LICENSE_COLUMNS} FROM licenses WHERE id = $1`, [id]);
  }

  /**
   * The licence of a key. With `lock`, the row stays locked FOR UPDATE until the transaction ends:
   * activations of one licence then run one after another, so counting seats and taking one is atomic.
   */
  findLicenseByKeyHash(
    hash: Buffer,
    options: { manager?: EntityManager; lock?: boolean } = {},
  ): Promise<LicenseRow | null> {
    return row<LicenseRow>(
      options.manager ?? this.db.manager,
      `SELECT ${LICENSE_COLUMNS} FROM licenses WHERE key_hash = $1${options.lock ? ' FOR UPDATE' : ''}`,
      [hash],
    );
  }

  /** Revokes now; an earlier revocation stands. Null when there is no such licence. */
  revokeLicense(id: string): Promise<LicenseRow | null> {
    return row<LicenseRow>(
      this.db,
      `UPDATE licenses SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${LICENSE_COLUMNS}`,
      [id],
    );
  }

  async countActiveDevices(licenseId: string, manager: EntityManager = this.db.manager): Promise<number> {
    const counted = await row<{ n: number }>(
      manager,
      'SELECT count(*)::int AS n FROM license_activations WHERE license_id = $1 AND deactivated_at IS NULL',
      [licenseId],
    );
    return counted?.n ?? 0;
  }

  findActiveActivation(
    licenseId: string,
    deviceId: string,
    manager: EntityManager = this.db.manager,
  ): Promise<ActivationRow | null> {
    return row<ActivationRow>(
      manager,
      `SELECT ${ACTIVATION_COLUMNS} FROM license_activations
        WHERE license_id = $1 AND device_id = $2 AND deactivated_at IS NULL`,
      [licenseId, deviceId],
    );
  }

  /** The device's most recent activation, active or not. */
  findLatestActivation(licenseId: string, deviceId: string): Promise<ActivationRow | null> {
    return row<ActivationRow>(
      this.db,
      `SELECT ${ACTIVATION_COLUMNS} FROM license_activations
        WHERE license_id = $1 AND device_id = $2 ORDER BY id DESC LIMIT 1`,
      [licenseId, deviceId],
    );
  }

  async insertActivation(
    activation: { id: string; licenseId: string; deviceId: string; deviceName: string | null },
    manager: EntityManager,
  ): Promise<ActivationRow> {
    const inserted = await row<ActivationRow>(
      manager,
      `INSERT INTO license_activations (id, license_id, device_id, device_name) VALUES ($1, $2, $3, $4)
       RETURNING ${ACTIVATION_COLUMNS}`,
      [activation.id, activation.licenseId, activation.deviceId, activation.deviceName],
    );
    return inserted!;
  }

  /** Records that the device was seen now; a new device name replaces the old one, none keeps it. */
  async touchActivation(
    id: string,
    deviceName: string | null,
    manager: EntityManager = this.db.manager,
  ): Promise<ActivationRow> {
    const touched = await rows<ActivationRow>(
      manager,
      `UPDATE license_activations SET last_seen_at = now(), device_name = COALESCE($2, device_name)
        WHERE id = $1 RETURNING ${ACTIVATION_COLUMNS}`,
      [id, deviceName],
    );
    return touched[0]!;
  }

  /** Frees the device's seat; null when the device holds none. */
  async deactivate(licenseId: string, deviceId: string): Promise<ActivationRow | null> {
    const updated = await rows<ActivationRow>(
      this.db,
      `UPDATE license_activations SET deactivated_at = now()
        WHERE license_id = $1 AND device_id = $2 AND deactivated_at IS NULL RETURNING ${ACTIVATION_COLUMNS}`,
      [licenseId, deviceId],
    );
    return updated[0] ?? null;
  }

  // ---- the account's own view (dashboard) ----

  /** The account's licences, newest first, each with its active seats (oldest first) as JSON. */
  listForAccount(accountId: string): Promise<(LicenseRow & { devices: AccountDeviceRow[] })[]> {
    return rows<LicenseRow & { devices: AccountDeviceRow[] }>(
      this.db,
      `SELECT ${LICENSE_COLUMNS},
              COALESCE((SELECT json_agg(json_build_object('id', a.id, 'device_id', a.device_id, 'device_name', a.device_name,
                                                          'first_seen_at', a.first_seen_at, 'last_seen_at', a.last_seen_at)
                                        ORDER BY a.id)
                          FROM license_activations a WHERE a.license_id = l.id AND a.deactivated_at IS NULL), '[]') AS devices
         FROM licenses l WHERE l.account_id = $1 ORDER BY l.id DESC`,
      [accountId],
    );
  }

  /** Frees a seat of one of the account's licences; null when there is no such active seat. */
  deactivateForAccount(accountId: string, licenseId: string, activationId: string): Promise<ActivationRow | null> {
    return row<ActivationRow>(
      this.db,
      `UPDATE license_activations a SET deactivated_at = now()
         FROM licenses l
        WHERE a.id = $3 AND a.license_id = $2 AND a.deactivated_at IS NULL AND l.id = a.license_id AND l.account_id = $1
        RETURNING ${ACTIVATION_COLUMNS.split(', ')
          .map((column) => `a.${column}`)
          .join(', ')}`,
      [accountId, licenseId, activationId],
    );
  }
}

/** A seat as the account's licence list shows it (timestamps as JSON strings). */
export interface AccountDeviceRow {
  id: string;
  device_id: string;
  device_name: string | null;
  first_seen_at: string;
  last_seen_at: string;
}
