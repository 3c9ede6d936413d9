// Entry point of the operator command line (`npm run admin -- <command>`): the admin services without
// HTTP, composed by AppModule.forAdminCli, reading the same configuration and .env as the API.
import 'reflect-metadata';
import { CommandFailed, helpFor, runAdminCommand, USAGE, UsageError, usageErrorIn } from './admin/admin-commands';
import { ApiError } from './common/errors';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  // Help and usage errors need no configuration, no database and not the application, whose modules alone
  // take seconds of CPU to load: those are loaded only for a command that runs.
  const help = helpFor(argv);
  if (help) {
    process.stdout.write(help);
    return 0;
  }
  const usage = await usageErrorIn(argv);
  if (usage) return usageFailure(usage);
  // One after another: Node refuses to require() an ES module (@nestjs/core) another import() is still loading.
  const { NestFactory } = await import('@nestjs/core');
  const { AppModule } = await import('./app.module.js');
  const { AdminService } = await import('./admin/admin.service.js');
  const { LicenseAdminService } = await import('./license/license-admin.service.js');
  const { loadConfigOrExit } = await import('./common/config/config.js');
  const config = await loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(AppModule.forAdminCli(config), {
    logger: false,
    // Nest's default ends the process silently (exit 1, its logger off) when a module cannot start — an
    // unreachable database, say; the error comes back here instead and is printed below.
    abortOnError: false,
  });
  try {
    const result = await runAdminCommand(app.get(AdminService), app.get(LicenseAdminService), process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof CommandFailed) {
      process.stdout.write(`${JSON.stringify(error.result, null, 2)}\n`);
      return 1;
    }
    if (error instanceof UsageError) return usageFailure(error);
    if (error instanceof ApiError) {
      process.stderr.write(`${error.code}: ${error.message}${error.param ? ` (param: ${error.param})` : ''}\n`);
      return 1;
    }
    throw error;
  } finally {
    await app.close();
  }
}

function usageFailure(error: UsageError): number {
  process.stderr.write(`error: ${error.message}\n\n${USAGE}`);
  return 2;
}

main().then(
  // Exit once stdout has taken everything (a long report through a pipe is written asynchronously).
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    process.stderr.write(`admin command failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
