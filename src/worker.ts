// Entry point of a worker (`npm run start:worker`): runs queue processors, opens no HTTP port.
// Start several to scale.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { loadConfigOrExit } from './common/config/config';
import { createLogger } from './common/logger';

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'worker');
  const app = await NestFactory.createApplicationContext(AppModule.forWorker(config, logger), { bufferLogs: true });
  app.useLogger(app.get(PinoNestLogger));
  // SIGTERM: processors finish or hand back their jobs before the process exits.
  app.enableShutdownHooks();
  await app.init();
  logger.info({ region: config.region, concurrency: config.workerConcurrency }, 'mediajobs worker started');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`mediajobs worker failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
