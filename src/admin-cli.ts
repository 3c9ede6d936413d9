// Entry point of the operator command line (`npm run admin -- <command>`): the admin services without
// HTTP, composed by AppModule.forAdminCli, reading the same configuration and .env as the API.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { CommandFailed, helpFor, runAdminCommand, USAGE, UsageError } from './admin/admin-commands';
import { AdminService } from './admin/admin.service';
import { AppModule } from './app.module';
import { loadConfigOrExit } from './common/config/config';
import { ApiError } from './common/errors';
import { LicenseAdminService } from './license/license-admin.service';

async function main(): Promise<number> {
  // Help needs no configuration and no database.
  const help = helpFor(process.argv.slice(2));
  if (help) {
    process.stdout.write(help);
    return 0;
  }
  const config = await loadConfigOrExit();
  const app = await NestFactory.createApplicationContext(AppModule.forAdminCli(config), { logger: false });
  try {
    const result = await runAdminCommand(app.get(AdminService), app.get(LicenseAdminService), process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof CommandFailed) {
      process.stdout.write(`${JSON.stringify(error.result, null, 2)}\n`);
      return 1;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof ApiError) {
      process.stderr.write(`${error.code}: ${error.message}${error.param ? ` (param: ${error.param})` : ''}\n`);
      return 1;
    }
    throw error;
  } finally {
    await app.close();
  }
}

main().then(
  // Exit once stdout has taken everything (a long report through a pipe is written asynchronously).
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    process.stderr.write(`admin command failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
