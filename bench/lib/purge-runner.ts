// A worker's two retention tasks as one process for bench/purge.ts: the retention purge
// (src/processing/upkeep/retention-purge.ts) and the webhook event purge (the repository statement
// WebhookDispatcher.purge paces), both as the worker runs them — concurrently, each paced batch by
// batch — against DATABASE_URL, until both are done or SIGTERM stops them between batches. Prints one
// line `PURGED {"jobs":…,"events":…,"batches":…,"seconds":…}` when it ends.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { parseConfig } from '../../src/common/config/config';
import { createStorage } from '../../src/common/storage/storage.module';
import { batchPlan, inBatches } from '../../src/common/upkeep-batches';
import { ProcessingRepository } from '../../src/processing/processing.repository';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { WebhookDeliveryRepository } from '../../src/webhooks/webhook-delivery.repository';

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const db = new DataSource({ type: 'postgres', url: config.databaseUrl, extra: { max: 4 } });
  await db.initialize();
  const retention = new RetentionPurge(new ProcessingRepository(db), createStorage(config), config);
  const events = new WebhookDeliveryRepository(db);
  let stopped = false;
  process.once('SIGTERM', () => {
    stopped = true;
    retention.beforeApplicationShutdown();
  });
  const started = performance.now();
  process.stdout.write('PURGING\n');
  const [purged, eventRun] = await Promise.all([
    retention.purge(),
    inBatches(
      batchPlan(config, () => stopped),
      (limit) => events.purgeEvents(config.jobRetentionDays, limit),
    ),
  ]);
  const seconds = (performance.now() - started) / 1000;
  const batches = Object.values(purged).reduce((sum, run) => sum + run.batches, 0) + eventRun.batches;
  process.stdout.write(
    `PURGED ${JSON.stringify({ jobs: purged.jobs.done, events: eventRun.done, batches, seconds })}\n`,
  );
  await db.destroy();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`purge runner failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
