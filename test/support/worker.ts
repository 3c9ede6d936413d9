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
  return { api, worker, close: async () => (await timedClose('API', api), await timedClose('worker', worker)) };
}

/** Closes one side; a slow close names itself, so a teardown that hangs says which side held it. */
async function timedClose(side: string, closable: { close(): Promise<void> }): Promise<void> {
  const started = Date.now();
  await closable.close();
  const ms = Date.now() - started;
  if (ms > 5000) process.stderr.write(`startStack: the ${side} took ${ms} ms to close\n`);
}
