// Every migration, in order. Listed explicitly (not globbed) so the CLI, `npm run dev` and the test
// set-up all apply exactly the same set.
import { DataSource, type Migration } from 'typeorm';
import { Foundation1764100000000 } from './1764100000000-foundation';
import { Jobs1764200000000 } from './1764200000000-jobs';
import { Webhooks1764300000000 } from './1764300000000-webhooks';
import { Licenses1764400000000 } from './1764400000000-licenses';
import { ResolvedOutputOptions1764500000000 } from './1764500000000-resolved-output-options';
import { Members1764600000000 } from './1764600000000-members';
import { ItemWorker1764750000000 } from './1764750000000-item-worker';
import { Sdr2HdrQuality1765200000000 } from './1765200000000-sdr2hdr-quality';
import { ItemSegments1765250000000 } from './1765250000000-item-segments';
import { PlanEventStreams1765310000000 } from './1765310000000-plan-event-streams';
import { PlanStorageAndEndpoints1765400000000 } from './1765400000000-plan-storage-and-endpoints';
import { InvitationsAcrossAccounts1765410000000 } from './1765410000000-invitations-across-accounts';
import { ItemPhase1765420000000 } from './1765420000000-item-phase';
import { ItemChecks1765450000000 } from './1765450000000-item-checks';
import { UpkeepIndexes1765500000000 } from './1765500000000-upkeep-indexes';
import { GrowthIndexes1765510000000 } from './1765510000000-growth-indexes';
import { AccountUsageDays1765520000000 } from './1765520000000-account-usage-days';
import { AccountOpenJobs1765530000000 } from './1765530000000-account-open-jobs';
import { JobsFillfactor1765540000000 } from './1765540000000-jobs-fillfactor';
import { CancelChargesDelivered1765565000000 } from './1765565000000-cancel-charges-delivered';
import { Names1765600000000 } from './1765600000000-names';
import { JobOutputSpec1765610000000 } from './1765610000000-job-output-spec';

export const MIGRATIONS = [
  Foundation1764100000000,
  Jobs1764200000000,
  Webhooks1764300000000,
  Licenses1764400000000,
  ResolvedOutputOptions1764500000000,
  Members1764600000000,
  ItemWorker1764750000000,
  Sdr2HdrQuality1765200000000,
  ItemSegments1765250000000,
  PlanEventStreams1765310000000,
  PlanStorageAndEndpoints1765400000000,
  InvitationsAcrossAccounts1765410000000,
  ItemPhase1765420000000,
  ItemChecks1765450000000,
  UpkeepIndexes1765500000000,
  GrowthIndexes1765510000000,
  AccountUsageDays1765520000000,
  AccountOpenJobs1765530000000,
  JobsFillfactor1765540000000,
  CancelChargesDelivered1765565000000,
  Names1765600000000,
  JobOutputSpec1765610000000,
];

/**
 * Each migration in its own transaction, and one that sets `transaction = false` (an index built
 * CONCURRENTLY) in none: TypeORM refuses such a migration in its default mode ('all'). Every runner
 * (the CLI's data source, migrateDatabase below) passes this.
 */
export const MIGRATIONS_TRANSACTION_MODE = 'each' as const;

/** Applies every pending migration to the database at `url` (the tests' and benchmarks' one way); returns what ran. */
export async function migrateDatabase(url: string): Promise<Migration[]> {
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTransactionMode: MIGRATIONS_TRANSACTION_MODE,
  });
  await dataSource.initialize();
  try {
    return await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}
