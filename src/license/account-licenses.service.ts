import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors';
import { LicenseRepository, type AccountDeviceRow, type LicenseRow } from './license.repository';

export interface LicenseDeviceView {
  object: 'license_device';
  activation_id: string;
  device_id: string;
  name: string | null;
  first_seen_at: string;
  /** The last activation or online validation from this device. */
  last_seen_at: string;
}

export interface AccountLicenseView {
  object: 'license';
  id: string;
  key_prefix: string;
  plan: string;
  status: 'active' | 'expired' | 'revoked';
  max_devices: number;
  active_devices: number;
  expires_at: string;
  offline_grace_seconds: number;
  revoked_at: string | null;
  created_at: string;
  devices: LicenseDeviceView[];
}

function toDeviceView(device: AccountDeviceRow): LicenseDeviceView {
  return {
    object: 'license_device',
    activation_id: device.id,
    device_id: device.device_id,
    name: device.device_name,
    first_seen_at: new Date(device.first_seen_at).toISOString(),
    last_seen_at: new Date(device.last_seen_at).toISOString(),
  };
}

function statusOf(license: LicenseRow): AccountLicenseView['status'] {
  if (license.revoked_at) return 'revoked';
  return license.expires_at.getTime() <= Date.now() ? 'expired' : 'active';
}

/** The account's plugin licences and their seats, and freeing a seat (the dashboard's Licences page). */
@Injectable()
export class AccountLicensesService {
  constructor(private readonly licenses: LicenseRepository) {}

  async list(
    accountId: string,
  ): Promise<{ object: 'list'; data: AccountLicenseView[]; has_more: false; next_cursor: null }> {
    const found = await this.licenses.listForAccount(accountId);
    return {
      object: 'list',
      data: found.map((license) => ({
        object: 'license',
        id: license.id,
        key_prefix: license.key_prefix,
        plan: license.plan,
        status: statusOf(license),
        max_devices: license.max_devices,
        active_devices: license.devices.length,
        expires_at: license.expires_at.toISOString(),
        offline_grace_seconds: license.offline_grace_seconds,
        revoked_at: license.revoked_at ? license.revoked_at.toISOString() : null,
        created_at: license.created_at.toISOString(),
        devices: license.devices.map(toDeviceView),
      })),
      has_more: false,
      next_cursor: null,
    };
  }

  /**
   * Frees the device's seat, as the plugin's own deactivate would: the device's next validation or
   * token check answers device_not_activated, and another device may take the seat.
   */
  async deactivate(
    accountId: string,
    licenseId: string,
    activationId: string,
  ): Promise<LicenseDeviceView & { deactivated_at: string }> {
    const freed = await this.licenses.deactivateForAccount(accountId, licenseId, activationId);
    // Another account's licence or seat answers exactly like a missing one.
    if (!freed) {
      throw new ApiError('resource_missing', {
        param: 'activation_id',
        message: 'No active device with this activation id on this licence of your account.',
      });
    }
    return {
      object: 'license_device',
      activation_id: freed.id,
      device_id: freed.device_id,
      name: freed.device_name,
      first_seen_at: freed.first_seen_at.toISOString(),
      last_seen_at: freed.last_seen_at.toISOString(),
      deactivated_at: freed.deactivated_at!.toISOString(),
    };
  }
}
