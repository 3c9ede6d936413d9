// The DataSource for the TypeORM CLI (`npm run migration:run`). It must not import Nest.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../migrations';
import { loadDotEnv, parseConfig } from './common/config/config';

loadDotEnv();
export default new DataSource({
  type: 'postgres',
  url: parseConfig().databaseUrl,
  migrations: MIGRATIONS,
  synchronize: false,
  migrationsRun: false,
});
