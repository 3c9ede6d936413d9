import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { generateLicenseKey } from './license-key';
import { LicenseRepository, type LicenseRow } from './license.repository';

export const DEFAULT_OFFLINE_GRACE_SECONDS = 7 * 24 * 3600;
export const DEFAULT_LICENSE_PLAN = 'standard';

export interface LicenseAdminView {
  object: 'license';
  id: string;
  account_id: string;
  /** The first characters of the key, to recognise it; the key itself is stored only hashed. */
  key_prefix: string;
  plan: string;
  max_devices: number;
  active_devices: number;
  expires_at: string;
  offline_grace_seconds: number;
  revoked_at: string | null;
  created_at: string;
  /** The full `mjl_…` key: present only in the response that created it. */
  license_key?: string;
}

export interface NewLicenseRequest {
  accountId: string;
  maxDevices: number;
  expiresAt: string;
  offlineGraceSeconds?: number;
  plan?: string;
}

/** Operator actions on licences, shared by /v1/admin/licenses and `npm run admin`. */
@Injectable()
export class LicenseAdminService {
  constructor(private readonly licenses: LicenseRepository) {}

  async create(request: NewLicenseRequest): Promise<LicenseAdminView> {
    const expiresAt = new Date(request.expiresAt);
    if (Number.isNaN(expiresAt.getTime())) {
      throw new ApiError('invalid_parameter', {
        param: 'expires_at',
        message: 'expires_at must be an ISO 8601 date-time.',
      });
    }
    if (expiresAt.getTime() <= Date.now()) {
      throw new ApiError('invalid_parameter', { param: 'expires_at', message: 'expires_at must be in the future.' });
    }
    if (!(await this.licenses.accountExists(request.accountId))) {
      throw new ApiError('resource_missing', { param: 'account_id', message: 'No account with this id.' });
    }
    const generated = generateLicenseKey();
    const row = await this.licenses.insertLicense({
      id: newId('lic'),
      accountId: request.accountId,
      keyHash: generated.hash,
      keyPrefix: generated.prefix,
      plan: request.plan ?? DEFAULT_LICENSE_PLAN,
      maxDevices: request.maxDevices,
      expiresAt,
      offlineGraceSeconds: request.offlineGraceSeconds ?? DEFAULT_OFFLINE_GRACE_SECONDS,
    });
    return { ...(await this.view(row)), license_key: generated.key };
  }

  async get(id: string): Promise<LicenseAdminView> {
    return this.view(this.found(await this.licenses.findLicense(id)));
  }

  /** From now on the key answers license_invalid everywhere; revoking twice keeps the first time. */
  async revoke(id: string): Promise<LicenseAdminView> {
    return this.view(this.found(await this.licenses.revokeLicense(id)));
  }

  private found(row: LicenseRow | null): LicenseRow {
    if (!row) throw new ApiError('resource_missing', { param: 'id', message: 'No licence with this id.' });
    return row;
  }

  private async view(row: LicenseRow): Promise<LicenseAdminView> {
    return {
      object: 'license',
      id: row.id,
      account_id: row.account_id,
      key_prefix: row.key_prefix,
      plan: row.plan,
      max_devices: row.max_devices,
      active_devices: await this.licenses.countActiveDevices(row.id),
      expires_at: row.expires_at.toISOString(),
      offline_grace_seconds: row.offline_grace_seconds,
      revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
      created_at: row.created_at.toISOString(),
    };
  }
}
