// A worker process exactly as `npm run start:worker` starts one (WorkerModule, its config from the
// environment, shutdown hooks), except that its MediaRunner port (src/processing/media-runner.ts) is a
// runner that makes a one-byte output and passes its checks: what a job costs the service around the
// media tools — queue, claim, settlement, outbox, webhook — with no ffmpeg competing for the cores.
// bench/capacity.ts starts it as `node dist-bench/bench/lib/noop-worker.js`.
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { writeFile } from 'node:fs/promises';
import { loadConfigOrExit } from '../../src/common/config/config';
import { createLogger, NestPinoLogger } from '../../src/common/logger';
import {
  MEDIA_RUNNER,
  type MediaRunner,
  type RunItemRequest,
  type RunItemResult,
} from '../../src/processing/media-runner';
import { WorkerModule } from '../../src/worker.module';

/**
 * Outputs (and sdr2hdr light maps) of one byte; the tools for split items (probe, keyframes, split,
 * join) are not reached by the capacity bench's one-second items.
 */
const noopRunner: Pick<MediaRunner, 'run' | 'check' | 'lightMap'> & Partial<MediaRunner> = {
  async run(request: RunItemRequest): Promise<RunItemResult> {
    const audio = request.api === 'audio';
    const path = `${request.outputPath}.${audio ? 'wav' : 'mp4'}`;
    await writeFile(path, 'x');
    return {
      ok: true,
      path,
      processedSeconds: 1,
      outputWidth: audio ? 0 : 320,
      outputHeight: audio ? 0 : 180,
      container: audio ? 'wav' : 'mp4',
      contentType: audio ? 'audio/wav' : 'video/mp4',
      media: {},
      sourceSeconds: 1,
    };
  },
  async lightMap(request) {
    await writeFile(request.pngPath, 'x');
    return { ok: true, path: request.pngPath, frameSeconds: 0.5 };
  },
  async check() {
    return { ok: true, measured: {}, checks: [] };
  },
};

async function bootstrap(): Promise<void> {
  const config = await loadConfigOrExit();
  const logger = createLogger(config, 'worker', { buffered: true });
  const app = await Test.createTestingModule({ imports: [WorkerModule.forRoot(config)] })
    .overrideProvider(MEDIA_RUNNER)
    .useValue(noopRunner)
    .compile();
  app.useLogger(new NestPinoLogger(logger));
  app.enableShutdownHooks();
  await app.init();
  logger.info({ region: config.region, concurrency: config.workerConcurrency }, 'mediajobs no-op worker started');
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`no-op worker failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
