// Entry point of a worker (`npm run start:worker`): runs queue processors, opens no HTTP port.
// Start several to scale.
import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { WorkerModule } from './worker.module';
import { type AppConfig, loadConfigOrExit } from './common/config/config';
import { createLogger, NestPinoLogger } from './common/logger';

async function bootstrap(): Promise<void> {
  const config = await loadConfigOrExit();
  const logger = createLogger(config, 'worker', { buffered: true });
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(new NestPinoLogger(logger));
  stopOnSignals(app, config, logger);
  await app.init();
  logger.info({ region: config.region, concurrency: config.workerConcurrency }, 'mediajobs worker started');
}

/**
 * SIGTERM or SIGINT: processors finish or hand back their jobs, the application closes, and the signal
 * is raised again (as Nest's own shutdown hooks do). The close is bounded: every running item ends
 * within the job time limit (its media processes are killed then, a download is bounded by it), and
 * the rest of the close gets SHUTDOWN_GRACE_SECONDS. A close still running after that — a Redis
 * connection that never answers, left reconnecting after failovers — is cut: the process exits, which
 * closes every connection, and says so.
 */
function stopOnSignals(app: INestApplicationContext, config: AppConfig, logger: Logger): void {
  const boundSeconds = config.jobTimeLimitSeconds + config.shutdownGraceSeconds;
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal, bound_seconds: boundSeconds }, 'worker stopping');
    setTimeout(() => {
      logger.error(
        { signal, bound_seconds: boundSeconds },
        'the worker did not close within its bound: it exits, dropping its connections',
      );
      process.exit(1);
    }, boundSeconds * 1000).unref();
    app.close().then(
      () => process.kill(process.pid, signal),
      (error: unknown) => {
        logger.error({ err: error }, 'the worker could not close');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, stop);
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`mediajobs worker failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
