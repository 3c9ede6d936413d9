import { Module } from '@nestjs/common';
import { MaintenanceModule } from '../common/maintenance/maintenance.module';
import { RateLimitModule } from '../common/rate-limit/rate-limit.module';
import { AccessGuard } from './access.guard';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { AuthService } from './auth.service';
import { CredentialAttempts } from './credential-attempts';
import { CredentialsVersion } from './credentials-version';
import { SessionAuthenticator } from './session-authenticator';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

@Module({
  imports: [RateLimitModule, MaintenanceModule],
  providers: [
    ApiKeysRepository,
    ApiKeysService,
    AuthService,
    CredentialAttempts,
    CredentialsVersion,
    SessionsRepository,
    SessionsService,
    SessionAuthenticator,
    // Not a Nest guard: http-app.ts registers its checks as a Fastify hook ahead of Nest's pipeline.
    AccessGuard,
  ],
  exports: [AccessGuard, ApiKeysService, CredentialsVersion, SessionsService],
})
export class AuthModule {}
