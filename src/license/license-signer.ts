import { Inject, Injectable, Logger } from '@nestjs/common';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import {
  parseSigningKey,
  publicJwkOf,
  signLicenseToken,
  verifyLicenseToken,
  type Ed25519PublicJwk,
  type LicenseTokenClaims,
} from './license-token';

/**
 * Holds the Ed25519 key that signs licence tokens. From LICENSE_SIGNING_KEY; without it a
 * non-production run (tests, a bare `npm run start:api`) signs with a key generated at start-up,
 * whose tokens die with the process; production refuses to start (config.ts `checkApiConfig`). The key itself is never logged.
 */
@Injectable()
export class LicenseSigner {
  private readonly logger = new Logger(LicenseSigner.name);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  readonly jwk: Ed25519PublicJwk;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.privateKey = this.loadKey(config);
    this.publicKey = createPublicKey(this.privateKey);
    this.jwk = publicJwkOf(this.publicKey);
  }

  sign(claims: LicenseTokenClaims): string {
    return signLicenseToken(claims, this.privateKey, this.jwk.kid);
  }

  verify(token: string): LicenseTokenClaims | null {
    return verifyLicenseToken(token, this.publicKey, this.jwk.kid);
  }

  private loadKey(config: AppConfig): KeyObject {
    // Checked at start-up (parseConfig; in production createHttpApp requires one).
    if (config.licenseSigningKey) return parseSigningKey(config.licenseSigningKey);
    this.logger.warn(
      'LICENSE_SIGNING_KEY is not set: licence tokens are signed with a key generated for this process only. ' +
        'Set it (npm run dev writes one to .env) so tokens survive a restart and every API instance agrees.',
    );
    return generateKeyPairSync('ed25519').privateKey;
  }
}
