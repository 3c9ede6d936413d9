// Composition of the two processes built from this codebase: the HTTP API and the worker.
import { Module, RequestMethod, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AccountModule } from './account/account.module';
import { AdminModule } from './admin/admin.module';
import { ConfigModule } from './common/config/config.module';
import type { AppConfig } from './common/config/config';
import { DatabaseModule } from './common/database/database.module';
import { RedisModule } from './common/redis/redis.module';
import { StorageModule } from './common/storage/storage.module';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { JobsModule } from './jobs/jobs.module';
import { LicenseAdminModule, LicenseModule } from './license/license.module';
import { ProcessingModule } from './processing/processing.module';
import { HealthController } from './health/health.controller';
import { MetricsController } from './metrics/metrics.controller';
import { WebhooksApiModule, WebhooksWorkerModule } from './webhooks/webhooks.module';

/** What both processes need: configuration, Postgres, Redis, JSON logs. */
function core(config: AppConfig, logger: Logger): DynamicModule[] {
  return [
    ConfigModule.forRoot(config),
    LoggerModule.forRoot({
      // nestjs-pino's default route pattern ('{/*splat}') never matches on platform-fastify 12.
      forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
      pinoHttp: {
        logger,
        genReqId: (request) => (request as typeof request & { id: string }).id,
        customProps: () => ({}),
        // Ops endpoints are polled constantly; their lines would drown the useful ones.
        // The adapter rewrites req.url for middleware, so match on the original URL.
        autoLogging: {
          ignore: (request) =>
            /^\/(health|metrics)/.test(
              (request as typeof request & { originalUrl?: string }).originalUrl ?? request.url ?? '',
            ),
        },
        serializers: {
          req: (request: { id: string; method: string; url: string }) => ({
            id: request.id,
            method: request.method,
            url: request.url,
          }),
        },
      },
    }),
    { module: DatabaseModule },
    { module: RedisModule },
    { module: StorageModule },
  ];
}

@Module({})
export class AppModule {
  static forApi(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...core(config, logger),
        IdempotencyModule,
        AccountModule,
        AdminModule,
        JobsModule,
        WebhooksApiModule,
        LicenseModule,
        LicenseAdminModule,
      ],
      controllers: [HealthController, MetricsController],
    };
  }

  static forWorker(config: AppConfig, logger: Logger): DynamicModule {
    return { module: AppModule, imports: [...core(config, logger), ProcessingModule, WebhooksWorkerModule] };
  }

  /** The operator command line: the same services as the admin API, no HTTP. */
  static forAdminCli(config: AppConfig, logger: Logger): DynamicModule {
    return { module: AppModule, imports: [...core(config, logger), AdminModule, LicenseAdminModule] };
  }
}
