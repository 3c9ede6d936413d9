// Entry point of the HTTP API (`npm run start:api`). Migrations are an operator step, never run here.
import 'reflect-metadata';
import { exitOnConfigError, loadConfigOrExit } from './common/config/config';
import { createHttpApp } from './http-app';

async function bootstrap(): Promise<void> {
  const config = await loadConfigOrExit();
  const app = await createHttpApp(config);
  await app.listen({ port: config.port, host: process.env.HOST ?? '0.0.0.0' });
  const msg = `mediajobs API listening on ${config.publicBaseUrl}`;
  const dashboard = `${config.publicBaseUrl}/dashboard`;
  process.stdout.write(
    config.logFormat === 'pretty'
      ? `${msg}\n  dashboard: ${dashboard}\n  docs: ${config.docsUrl}\n`
      : `${JSON.stringify({ level: 30, msg, dashboard, docs: config.docsUrl })}\n`,
  );
}

bootstrap().catch((error: unknown) => {
  exitOnConfigError(error);
  process.stderr.write(`mediajobs API failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
