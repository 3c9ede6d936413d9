// The API's composition, and the operator CLI's (the admin services without HTTP). The worker's is
// worker.module.ts: nothing here imports src/processing/, so the API never loads the worker's code.
import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AccountModule } from './account/account.module';
import { AdminModule } from './admin/admin.module';
import type { AppConfig } from './common/config/config';
import { coreModules } from './core-modules';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { JobsModule } from './jobs/jobs.module';
import { JobsUsageModule } from './jobs/jobs-usage.module';
import { LicenseAdminModule, LicenseModule } from './license/license.module';
import { MembersModule } from './members/members.module';
import { HealthController } from './health/health.controller';
import { MetricsController } from './metrics/metrics.controller';
import { WebhooksApiModule } from './webhooks/webhooks.module';

@Module({})
export class AppModule {
  static forApi(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...coreModules(config),
        // Read at start-up to attach per-route settings (common/http/nest-routes.ts).
        DiscoveryModule,
        IdempotencyModule,
        JobsUsageModule,
        AccountModule,
        MembersModule,
        AdminModule,
        JobsModule,
        WebhooksApiModule,
        LicenseModule,
        LicenseAdminModule,
      ],
      controllers: [HealthController, MetricsController],
    };
  }

  /** The operator command line: the same services as the admin API, no HTTP. */
  static forAdminCli(config: AppConfig): DynamicModule {
    return { module: AppModule, imports: [...coreModules(config), JobsUsageModule, AdminModule, LicenseAdminModule] };
  }
}
