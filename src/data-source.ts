// The DataSource for the TypeORM CLI (`npm run migration:run`). It must not import Nest.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { MIGRATIONS, MIGRATIONS_TRANSACTION_MODE } from '../migrations';
import { loadDotEnv, parseConfig } from './common/config/config';
import { MigrationLogger } from './common/database/migration-logger';

loadDotEnv();
export default new DataSource({
  type: 'postgres',
  url: parseConfig().databaseUrl,
  migrations: MIGRATIONS,
  migrationsTransactionMode: MIGRATIONS_TRANSACTION_MODE,
  synchronize: false,
  migrationsRun: false,
  // One line per migration applied, not its SQL (the CLI switches query logging on).
  logger: new MigrationLogger(),
});
