import { Module } from '@nestjs/common';
import { RateLimitModule } from '../common/rate-limit/rate-limit.module';
import { AccountLicensesController } from './account-licenses.controller';
import { AccountLicensesService } from './account-licenses.service';
import { LicenseAdminController } from './license-admin.controller';
import { LicenseAdminService } from './license-admin.service';
import { LicenseController } from './license.controller';
import { LicenseRepository } from './license.repository';
import { LicenseService } from './license.service';
import { LicenseSigner } from './license-signer';

/** The public licence API (API process only): it needs the signing key. */
@Module({
  imports: [RateLimitModule],
  controllers: [LicenseController, AccountLicensesController],
  providers: [LicenseRepository, LicenseService, LicenseSigner, AccountLicensesService],
})
export class LicenseModule {}

/**
 * Issuing and revoking licences: /v1/admin/licenses and the operator CLI. Apart from the public
 * API because it never signs anything, so the CLI runs without LICENSE_SIGNING_KEY.
 */
@Module({
  controllers: [LicenseAdminController],
  providers: [LicenseRepository, LicenseAdminService],
  exports: [LicenseAdminService],
})
export class LicenseAdminModule {}
