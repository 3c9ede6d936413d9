import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MIGRATIONS } from '../../../migrations';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AfterCommitSubscriber } from './after-commit';
import { poolModeOptions } from './pool-mode';

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        type: 'postgres' as const,
        url: config.databaseUrl,
        migrations: MIGRATIONS,
        subscribers: [AfterCommitSubscriber],
        synchronize: false,
        migrationsRun: false,
        retryAttempts: 10,
        retryDelay: 1000,
        // Fail fast when Postgres is unreachable, so requests get a 503 envelope instead of hanging.
        connectTimeoutMS: 2000,
        extra: { max: 20, query_timeout: 10000, idleTimeoutMillis: 30000, ...poolModeOptions(config.databasePoolMode) },
      }),
    }),
  ],
})
export class DatabaseModule {}
