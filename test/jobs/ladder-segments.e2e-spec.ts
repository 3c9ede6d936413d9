// A long package item in units (issue 41, docs/ladder-plan.md step 7): the real API, real workers, real
// ffmpeg. With SEGMENT_SECONDS=4 a 10 s clip is split into units of whole HLS segments, the units are
// encoded (every rung of each) by two worker processes, and the join packages each rung by stream copy:
// the package is a one-pass package's shape — playlists parsed by m3u8-parser, every rung's boundaries on
// the same timestamps, every frame of the source once in every rung, HDR10 boxes in the HDR init segments —
// charged once like one pass. A unit whose media fails fails the item, charged 0, its parts removed.
import { Test } from '@nestjs/testing';
import { existsSync } from 'node:fs';
import { copyFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Parser, type Manifest } from 'm3u8-parser';
import { DataSource } from 'typeorm';
import { APP_CONFIG, parseConfig, type AppConfig } from '../../src/common/config/config';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { FfmpegMediaRunner } from '../../src/processing/ffmpeg-media-runner';
import {
  MEDIA_RUNNER,
  type EncodePackagePartRequest,
  type EncodePackagePartResult,
} from '../../src/processing/media-runner';
import { WorkerModule } from '../../src/worker.module';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { auditMoney } from '../support/processes';
import { startWorkerFleet, type WorkerFleet } from '../support/worker-fleet';
import { decodedFrameCount } from '../support/media-checks';
import { expectSegmentFilesGone } from '../support/segment-suite';

const GRANT = 10_000;
const SECONDS = 10;
const OUTPUT = { package: 'hls', ladder: [{ height: 180 }, { height: 144 }] };

function parse(text: string): Manifest {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

/** The real runner, except that the unit starting at `failAt` s reads a source cut short (real ffmpeg fails on it). */
class BrokenUnitRunner extends FfmpegMediaRunner {
  failAt: number | null = null;

  override async encodePackagePart(request: EncodePackagePartRequest): Promise<EncodePackagePartResult> {
    if (request.unit.start !== this.failAt) return super.encodePackagePart(request);
    const broken = `${request.partsDir}-broken.mp4`;
    await copyFile(request.inputPath, broken);
    await truncate(broken, 2000);
    return super.encodePackagePart({ ...request, inputPath: broken });
  }
}

describe('a long package item in units over workers', () => {
  let fleet: WorkerFleet;
  let api: TestApi;
  let db: DataSource;
  let account: TestAccount;
  let source: string;
  let uploadId: string;

  beforeAll(async () => {
    // The test fetches every file of a package from one address: above the public routes' per-IP limit.
    fleet = await startWorkerFleet('ladder-segments', { IP_RATE_LIMIT: '1000' });
    ({ api, db } = fleet);
    source = await sdrMp4({ width: 320, height: 180, seconds: SECONDS });
  }, 180_000);

  beforeEach(async () => {
    account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
    uploadId = await upload(api, account.apiKey, source);
  });

  afterAll(() => fleet?.close(), 120_000);

  async function submit(region: string): Promise<{ jobId: string; estimated: number }> {
    const body = { inputs: [{ upload_id: uploadId }], region, output: OUTPUT };
    const estimate = await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', { key: account.apiKey, body });
    expect(estimate.status).toBe(200);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
    expect(submitted.status).toBe(202);
    return { jobId: submitted.body.job_id as string, estimated: estimate.body.items[0].estimated_credits as number };
  }

  const units = (jobId: string): Promise<{ segment: number; status: string; worker: string }[]> =>
    db.query(`SELECT segment, status, worker FROM item_segments WHERE job_id = $1 ORDER BY segment`, [jobId]);

  it('two workers encode its units; the package is one pass’s shape, every rung decodes whole, charged once', async () => {
    const region = 'lseg-two';
    const { ids } = await fleet.twoWorkers(region, { SEGMENT_SECONDS: '4' });
    const { jobId, estimated } = await submit(region);
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 400_000);
    expect(job.status).toBe('succeeded');
    const [item] = job.items;
    expect(item.charged_credits).toBe(estimated);

    // Units of 4 s (whole HLS segments): 4 + 4 + 2, on both workers.
    const rows = await units(jobId);
    expect(rows.map((row) => row.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(new Set(rows.map((row) => row.worker))).toEqual(new Set(ids));

    const master = await fetch(item.output.playlist_url);
    expect(master.status).toBe(200);
    const manifest = parse(await master.text());
    expect(manifest.playlists!.map((playlist) => playlist.attributes['VIDEO-RANGE'])).toEqual(['PQ', 'PQ', 'SDR']);
    expect(item.output.renditions).toHaveLength(3);
    const sourceFrames = await decodedFrameCount(source);
    const starts: number[][] = [];
    for (const [n, playlist] of manifest.playlists!.entries()) {
      const url = new URL(playlist.uri, item.output.playlist_url);
      const media = parse(await (await fetch(url)).text());
      expect(media.endList).toBe(true);
      expect(media.segments.map((segment) => segment.duration)).toEqual([4, 4, 2]);
      let at = 0;
      starts.push(media.segments.map((segment) => ((at += segment.duration), at - segment.duration)));
      // The rung as a player gets it: init + segments, decoded whole by ffmpeg.
      const files = [media.segments[0].map!.uri, ...media.segments.map((segment) => segment.uri)];
      const bytes = await Promise.all(
        files.map(async (file) => Buffer.from(await (await fetch(new URL(file, url))).arrayBuffer())),
      );
      const joined = join(fleet.dir, `${jobId}-${n}.mp4`);
      await writeFile(joined, Buffer.concat(bytes));
      expect(await decodedFrameCount(joined)).toBe(sourceFrames);
      const hdr = await readHdrMetadata(joined);
      if (playlist.attributes['VIDEO-RANGE'] === 'PQ') {
        expect(hdr?.levels.maxCll).toBeGreaterThan(0);
        expect(hdr?.levels.maxCll).toBe(item.output.renditions[n].light.max_cll);
      } else expect(hdr).toBeNull();
    }
    expect(starts.every((rung) => JSON.stringify(rung) === JSON.stringify(starts[0]))).toBe(true);
    expect(job.items[0].checks.map((check: { name: string }) => check.name)).toEqual(
      expect.arrayContaining(['segment_alignment', 'segment_durations']),
    );

    expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
    expect(await fleet.outboxEvents(jobId)).toEqual(['job.succeeded']);
    await expectSegmentFilesGone(fleet, jobId);
    // The split stored a copy of the source: the customer's upload is still there.
    const [stored] = await db.query(`SELECT storage_key FROM uploads WHERE id = $1`, [uploadId]);
    expect(existsSync(join(fleet.dir, 'storage', stored.storage_key))).toBe(true);
  }, 500_000);

  it('a unit whose media fails fails the item: charged 0, the hold released, every part removed', async () => {
    const region = 'lseg-broken';
    const config = parseConfig({ ...process.env, ...fleet.workerEnv(region, { SEGMENT_SECONDS: '4' }) });
    let runner: BrokenUnitRunner | undefined;
    const worker = await Test.createTestingModule({ imports: [WorkerModule.forRoot(config)] })
      .overrideProvider(MEDIA_RUNNER)
      .useFactory({
        factory: (appConfig: AppConfig) => (runner = new BrokenUnitRunner(appConfig)),
        inject: [APP_CONFIG],
      })
      .compile();
    worker.useLogger(false);
    await worker.init();
    try {
      runner!.failAt = 4;
      const { jobId } = await submit(region);
      const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 400_000);
      expect(job.status).toBe('failed');
      expect(job.items[0]).toMatchObject({ status: 'failed', charged_credits: 0 });
      expect((await units(jobId)).find((row) => row.segment === 1)?.status).toBe('failed');
      expect((await auditMoney(api, account.apiKey, [job], GRANT)).problems).toEqual([]);
      expect(await fleet.outboxEvents(jobId)).toEqual(['job.failed']);
      await expectSegmentFilesGone(fleet, jobId);
    } finally {
      await worker.close();
    }
  }, 500_000);
});
