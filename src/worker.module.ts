// The worker process's composition: the media processors and webhook deliveries, no HTTP. The only
// module that imports src/processing/, so the API never loads the worker's code or its ffmpeg pipelines.
import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from './common/config/config';
import { coreModules } from './core-modules';
import { WorkerMetricsServer } from './metrics/worker-metrics-server';
import { ProcessingModule } from './processing/processing.module';
import { WebhooksWorkerModule } from './webhooks/webhooks.module';

@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [...coreModules(config), ProcessingModule, WebhooksWorkerModule],
      providers: [WorkerMetricsServer],
    };
  }
}
