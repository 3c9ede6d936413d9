// Composition of the two processes built from this codebase: the HTTP API and the worker.
import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AccountModule } from './account/account.module';
import { AdminModule } from './admin/admin.module';
import { ConfigModule } from './common/config/config.module';
import type { AppConfig } from './common/config/config';
import { DatabaseModule } from './common/database/database.module';
import { RedisModule } from './common/redis/redis.module';
import { StorageModule } from './common/storage/storage.module';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { JobsModule } from './jobs/jobs.module';
import { JobsUsageModule } from './jobs/jobs-usage.module';
import { LicenseAdminModule, LicenseModule } from './license/license.module';
import { MembersModule } from './members/members.module';
import { ProcessingModule } from './processing/processing.module';
import { HealthController } from './health/health.controller';
import { MetricsController } from './metrics/metrics.controller';
import { WorkerMetricsServer } from './metrics/worker-metrics-server';
import { WebhooksApiModule, WebhooksWorkerModule } from './webhooks/webhooks.module';

/** What every process needs: configuration, Postgres, Redis, storage. */
function core(config: AppConfig): DynamicModule[] {
  return [ConfigModule.forRoot(config), { module: DatabaseModule }, { module: RedisModule }, { module: StorageModule }];
}

@Module({})
export class AppModule {
  static forApi(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...core(config),
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

  static forWorker(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [...core(config), ProcessingModule, WebhooksWorkerModule],
      providers: [WorkerMetricsServer],
    };
  }

  /** The operator command line: the same services as the admin API, no HTTP. */
  static forAdminCli(config: AppConfig): DynamicModule {
    return { module: AppModule, imports: [...core(config), JobsUsageModule, AdminModule, LicenseAdminModule] };
  }
}
