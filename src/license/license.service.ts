import { Inject, Injectable } from '@nestjs/common';
import { isRevoked } from '../auth/api-key';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { newId } from '../common/ids';
import { RateLimiter, type RateLimitResult } from '../common/rate-limit/rate-limiter';
import { hashLicenseKey, LICENSE_KEY_PATTERN } from './license-key';
import { LicenseSigner } from './license-signer';
import type { Ed25519PublicJwk } from './license-token';
import { LicenseRepository, type ActivationRow, type LicenseRow } from './license.repository';

export interface LicenseSummary {
  id: string;
  plan: string;
  expires_at: string;
  max_devices: number;
  active_devices: number;
}

/** The answer to activate and validate (docs/api-decisions.md §7). */
export interface LicenseActivationView {
  object: 'license_activation';
  activation_id: string;
  device_id: string;
  license: LicenseSummary;
  token: string;
  offline_grace_until: string;
}

export interface LicenseDeactivationView {
  object: 'license_deactivation';
  activation_id: string;
  device_id: string;
  deactivated_at: string;
  license: LicenseSummary;
}

/** GET /v1/license: what the token's holder is entitled to, as the service sees it now. */
export interface LicenseEntitlementsView {
  object: 'license';
  id: string;
  status: 'active';
  plan: string;
  expires_at: string;
  max_devices: number;
  active_devices: number;
  offline_grace_seconds: number;
  device: { id: string; name: string | null; activation_id: string; first_seen_at: string; last_seen_at: string };
  token: { issued_at: string; offline_grace_until: string };
}

export interface DeviceRequest {
  licenseKey: string;
  deviceId: string;
  deviceName?: string;
}

const TOKEN_HEADER = 'X-License-Token';
const secondsToIso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * The public licence API. Every call is limited per licence key (on top of the guard's per-IP
 * limit), so one leaked or guessed key cannot be hammered from many addresses.
 */
@Injectable()
export class LicenseService {
  constructor(
    private readonly licenses: LicenseRepository,
    private readonly signer: LicenseSigner,
    private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Takes a seat for the device, or renews the seat it already holds (not a new seat). The licence
   * row is locked for the whole transaction, so concurrent activations of different devices are
   * counted one after another and can never exceed max_devices.
   */
  async activate(request: DeviceRequest): Promise<LicenseActivationView> {
    const hash = await this.admitKey(request.licenseKey);
    const deviceName = request.deviceName ?? null;
    return this.licenses.transaction(async (manager) => {
      const license = this.usable(await this.licenses.findLicenseByKeyHash(hash, { manager, lock: true }));
      const held = await this.licenses.findActiveActivation(license.id, request.deviceId, manager);
      let activation: ActivationRow;
      if (held) {
        activation = await this.licenses.touchActivation(held.id, deviceName, manager);
      } else {
        const active = await this.licenses.countActiveDevices(license.id, manager);
        if (active >= license.max_devices) {
          throw new ApiError('activation_limit_reached', {
            param: 'device_id',
            details: { max_devices: license.max_devices, active_devices: active },
          });
        }
        activation = await this.licenses.insertActivation(
          { id: newId('act'), licenseId: license.id, deviceId: request.deviceId, deviceName },
          manager,
        );
      }
      return this.issue(license, activation, await this.licenses.countActiveDevices(license.id, manager));
    });
  }

  /** Online check of an activated device: records it as seen and hands out a fresh token. */
  async validate(request: DeviceRequest): Promise<LicenseActivationView> {
    const hash = await this.admitKey(request.licenseKey);
    const license = this.usable(await this.licenses.findLicenseByKeyHash(hash));
    const held = await this.licenses.findActiveActivation(license.id, request.deviceId);
    if (!held) throw this.deviceNotActivated();
    const activation = await this.licenses.touchActivation(held.id, null);
    return this.issue(license, activation, await this.licenses.countActiveDevices(license.id));
  }

  /**
   * Frees the device's seat. Repeating it (a client retrying after a lost response) answers the
   * same again; a device that never held a seat is device_not_activated.
   */
  async deactivate(request: DeviceRequest): Promise<LicenseDeactivationView> {
    const hash = await this.admitKey(request.licenseKey);
    const license = this.usable(await this.licenses.findLicenseByKeyHash(hash));
    const activation =
      (await this.licenses.deactivate(license.id, request.deviceId)) ??
      (await this.licenses.findLatestActivation(license.id, request.deviceId));
    if (!activation?.deactivated_at) throw this.deviceNotActivated();
    return {
      object: 'license_deactivation',
      activation_id: activation.id,
      device_id: activation.device_id,
      deactivated_at: activation.deactivated_at.toISOString(),
      license: this.summary(license, await this.licenses.countActiveDevices(license.id)),
    };
  }

  /**
   * The entitlements behind a token. A token past its grace_until is refused before anything else
   * (offline_grace_expired: validate online, then retry); then the licence and the device's seat
   * are checked as they are now, so a revoked licence or a freed seat stops working at once online.
   */
  async entitlements(token: string | undefined): Promise<LicenseEntitlementsView> {
    if (!token) {
      throw new ApiError('missing_parameter', {
        param: TOKEN_HEADER,
        message: `Send the licence token from activate or validate in the ${TOKEN_HEADER} header.`,
      });
    }
    const claims = this.signer.verify(token);
    if (!claims) {
      throw new ApiError('license_invalid', {
        param: TOKEN_HEADER,
        message: 'The licence token is not valid. Validate the licence online to get a new one.',
      });
    }
    this.enforce(await this.limiter.hit(`lic:id:${claims.license_id}`, this.config.licenseRateLimitPerSecond));
    if (Date.now() >= claims.grace_until * 1000) {
      throw new ApiError('offline_grace_expired', {
        param: TOKEN_HEADER,
        details: { offline_grace_until: secondsToIso(claims.grace_until) },
      });
    }
    const license = this.usable(await this.licenses.findLicense(claims.license_id), TOKEN_HEADER);
    const activation = await this.licenses.findActiveActivation(license.id, claims.device_id);
    // The token is bound to the seat it was issued for: after a deactivation the device's next
    // activation is a new seat, and tokens of the freed one stay refused.
    if (!activation || activation.id !== claims.activation_id) {
      throw new ApiError('device_not_activated', {
        param: TOKEN_HEADER,
        message: activation
          ? 'This token belongs to an earlier activation of this device, which was deactivated. Use the token from the latest activate or validate.'
          : 'This device holds no seat of the licence: activate it again.',
      });
    }
    return {
      object: 'license',
      id: license.id,
      status: 'active',
      plan: license.plan,
      expires_at: license.expires_at.toISOString(),
      max_devices: license.max_devices,
      active_devices: await this.licenses.countActiveDevices(license.id),
      offline_grace_seconds: license.offline_grace_seconds,
      device: {
        id: activation.device_id,
        name: activation.device_name,
        activation_id: activation.id,
        first_seen_at: activation.first_seen_at.toISOString(),
        last_seen_at: activation.last_seen_at.toISOString(),
      },
      token: { issued_at: secondsToIso(claims.iat), offline_grace_until: secondsToIso(claims.grace_until) },
    };
  }

  publicKey(): Ed25519PublicJwk {
    return this.signer.jwk;
  }

  /**
   * Counts the call against the key's own limit, then returns the key's hash. The limit is taken
   * before the format check, so a burst of malformed guesses is limited like any other.
   */
  private async admitKey(licenseKey: string): Promise<Buffer> {
    const hash = hashLicenseKey(licenseKey);
    this.enforce(
      await this.limiter.hit(`lic:key:${hash.toString('hex', 0, 8)}`, this.config.licenseRateLimitPerSecond),
    );
    if (!LICENSE_KEY_PATTERN.test(licenseKey)) throw new ApiError('license_invalid', { param: 'license_key' });
    return hash;
  }

  private enforce(result: RateLimitResult): void {
    if (!result.exceeded) return;
    throw new ApiError('rate_limit_exceeded', {
      message: 'Too many requests for this licence. Retry after the number of seconds in Retry-After.',
      details: {
        limit: result.limit,
        window_seconds: RateLimiter.WINDOW_SECONDS,
        retry_after_seconds: result.resetSeconds,
      },
    });
  }

  /** Unknown and revoked licences look the same (license_invalid), so a revocation leaks nothing. */
  private usable(license: LicenseRow | null, param = 'license_key'): LicenseRow {
    if (!license || isRevoked(license.revoked_at)) throw new ApiError('license_invalid', { param });
    if (license.expires_at.getTime() <= Date.now()) {
      throw new ApiError('license_expired', { param, details: { expires_at: license.expires_at.toISOString() } });
    }
    return license;
  }

  private deviceNotActivated(param = 'device_id'): ApiError {
    return new ApiError('device_not_activated', { param });
  }

  private summary(license: LicenseRow, activeDevices: number): LicenseSummary {
    return {
      id: license.id,
      plan: license.plan,
      expires_at: license.expires_at.toISOString(),
      max_devices: license.max_devices,
      active_devices: activeDevices,
    };
  }

  /**
   * A token for the device. grace_until is rounded up to a whole second, so the grace is never
   * shorter than the licence's offline_grace_seconds (JWT times are whole seconds).
   */
  private issue(license: LicenseRow, activation: ActivationRow, activeDevices: number): LicenseActivationView {
    const now = Date.now();
    const graceUntil = Math.ceil(now / 1000) + license.offline_grace_seconds;
    const token = this.signer.sign({
      license_id: license.id,
      activation_id: activation.id,
      device_id: activation.device_id,
      plan: license.plan,
      iat: Math.floor(now / 1000),
      grace_until: graceUntil,
      exp: Math.floor(license.expires_at.getTime() / 1000),
    });
    return {
      object: 'license_activation',
      activation_id: activation.id,
      device_id: activation.device_id,
      license: this.summary(license, activeDevices),
      token,
      offline_grace_until: secondsToIso(graceUntil),
    };
  }
}
