// The built worker (dist/) in a process of its own that closes itself as a test or an embedding
// process does: on SIGTERM it closes the Nest application and then does nothing more — no
// process.exit, no re-raised signal (src/worker.ts's shutdown hooks re-raise SIGTERM, which ends the
// process whatever is left open). So it exits only when close() left nothing running: a client still
// connected or reconnecting keeps it alive. Started by test/scale/redis-cluster.e2e-spec.ts with the
// test environment; prints `started`, then `closed`.
const { join } = require('node:path');
const { NestFactory } = require('@nestjs/core');

const dist = join(__dirname, '../../dist/src');
const { WorkerModule } = require(join(dist, 'worker.module'));
const { parseConfig } = require(join(dist, 'common/config/config'));

async function main() {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(parseConfig()), { logger: false });
  await app.init();
  process.once('SIGTERM', () => {
    app.close().then(
      () => process.stdout.write('closed\n'),
      (error) => process.stdout.write(`close failed: ${error.stack}\n`),
    );
  });
  process.stdout.write('started\n');
}

main().catch((error) => {
  process.stderr.write(`closing-worker failed to start: ${error.stack}\n`);
  process.exit(1);
});
