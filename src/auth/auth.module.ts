import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { MaintenanceService } from '../common/maintenance/maintenance.service';
import { RateLimiter } from '../common/rate-limit/rate-limiter';
import { AccessGuard } from './access.guard';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { AuthService } from './auth.service';
import { CredentialsVersion } from './credentials-version';

@Module({
  providers: [
    ApiKeysRepository,
    ApiKeysService,
    AuthService,
    CredentialsVersion,
    RateLimiter,
    MaintenanceService,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [ApiKeysService, CredentialsVersion, MaintenanceService, RateLimiter],
})
export class AuthModule {}
