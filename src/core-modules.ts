// What every process built from this codebase needs, whatever else it runs: configuration, PostgreSQL,
// Redis, the queues' owner and storage. The API, the worker and the operator CLI each compose their own modules on top.
import type { DynamicModule } from '@nestjs/common';
import type { AppConfig } from './common/config/config';
import { ConfigModule } from './common/config/config.module';
import { DatabaseModule } from './common/database/database.module';
import { QueuesModule } from './queues/queue-owner';
import { RedisModule } from './common/redis/redis.module';
import { StorageModule } from './common/storage/storage.module';

export function coreModules(config: AppConfig): DynamicModule[] {
  return [
    ConfigModule.forRoot(config),
    { module: DatabaseModule },
    { module: RedisModule },
    { module: QueuesModule },
    { module: StorageModule },
  ];
}
