import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { WorkerModule } from '../../src/worker.module';
import { parseConfig, type AppConfig } from '../../src/common/config/config';
import { startApi, type TestApi } from './app';

export interface TestWorker {
  app: INestApplicationContext;
  config: AppConfig;
  close(): Promise<void>;
}

/** A real worker (queue consumer, heartbeat, reconciler) in the test process, with the test env. */
export async function startWorker(overrides: Record<string, string> = {}): Promise<TestWorker> {
  const config = parseConfig({ ...process.env, ...overrides });
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
    logger: false,
  });
  await app.init();
  return { app, config, close: () => app.close() };
}

/** An API and a worker that agree on everything a job's views contain (public URL, docs URL). */
export async function startStack(
  env: Record<string, string>,
): Promise<{ api: TestApi; worker: TestWorker; close(): Promise<void> }> {
  const api = await startApi(env);
  const worker = await startWorker({ ...env, PUBLIC_BASE_URL: api.config.publicBaseUrl, DOCS_URL: api.config.docsUrl });
  return {
    api,
    worker,
    close: async () => {
      await closeWithin(api.close(), 'API', api.config.region);
      await closeWithin(worker.close(), 'worker', worker.config.region);
    },
  };
}

/**
 * Waits at most 25 s for one side of a stack to close, then says so on stderr and goes on. In two full
 * runs (never alone) the light-map suite's close did not end within Jest's 60 s hook timeout; this keeps
 * the two closes inside it and names the side that hung, for the next look.
 */
async function closeWithin(closing: Promise<void>, side: string, region: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 25_000)));
  const outcome = await Promise.race([closing.then(() => 'closed' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late')
    process.stderr.write(`test stack (region ${region}): the ${side} did not close within 25 s\n`);
}
