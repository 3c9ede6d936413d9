// Entry point of a worker (`npm run start:worker`): runs queue processors, opens no HTTP port.
// Start several to scale.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { WorkerModule } from './worker.module';
import { loadConfigOrExit } from './common/config/config';
import { createLogger, NestPinoLogger } from './common/logger';

async function bootstrap(): Promise<void> {
  const config = await loadConfigOrExit();
  const logger = createLogger(config, 'worker', { buffered: true });
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(new NestPinoLogger(logger));
  // SIGTERM: processors finish or hand back their jobs before the process exits.
  app.enableShutdownHooks();
  await app.init();
  logger.info({ region: config.region, concurrency: config.workerConcurrency }, 'mediajobs worker started');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`mediajobs worker failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
