// Workers on other machines (issue 13): the API and two workers as separate processes, each with its own
// empty temp folder and no STORAGE_DIR in common, all on the S3 backend (a private Swift). Upload →
// 3-item job → items run on both workers → every output downloadable through its signed link →
// charged exactly once; the workers' folders are empty again afterwards. A long item's segments travel
// between the two workers through the bucket, and none is left there once the item ends.
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { createS3Client } from '../../src/common/storage/s3-client';
import { auditMoney, killAllWorkers, pollUntil, snapshotApp, spawnWorker } from '../support/processes';
import { keyframedSdrMp4, sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { decodedFrameCount } from '../support/media-checks';
import { startSwift, type SwiftServer } from '../support/swift';

const REGION = 's3-two';
const GRANT = 500;
const PREFIX = 'two/';

/** Frames of the first video stream (decoded and counted by ffprobe). */
describe('API and two worker processes sharing only the object store', () => {
  let swift: SwiftServer;
  let api: TestApi;
  let scratch: string;
  let s3: S3Client;
  const workerDirs: string[] = [];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'mj-two-workers-'));
    const [started, app] = await Promise.all([startSwift(), snapshotApp(scratch)]);
    swift = started;
    const store = swift.env(`mj-two-${process.pid}`, PREFIX);
    // The API's STORAGE_DIR is a folder of its own that no worker sees (and the S3 backend ignores).
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(scratch, 'api-')), ...store });
    const settings = api.config.storage;
    if (settings.backend !== 's3') throw new Error('the test API must run on S3');
    s3 = createS3Client({ ...settings, prefix: '' });
    for (const name of ['worker-a', 'worker-b']) {
      const own = await mkdtemp(join(scratch, `${name}-`));
      workerDirs.push(own);
      spawnWorker(
        {
          REGION,
          ...store,
          // A 6 s clip with a keyframe a second is cut into segments (the other items have one keyframe).
          SEGMENT_SECONDS: '2',
          STORAGE_DIR: join(own, 'storage'), // never created: the S3 backend must not need it
          TMPDIR: own, // the worker's only folder: inputs and outputs while it works
          PUBLIC_BASE_URL: api.config.publicBaseUrl,
          DOCS_URL: api.config.docsUrl,
        },
        { app, logFile: join(scratch, `${name}.log`) },
      );
    }
  }, 180_000);

  afterAll(async () => {
    s3?.destroy();
    await killAllWorkers();
    await api?.close();
    await swift?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('upload → 3-item job → outputs downloadable → charged exactly once', async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
    const uploads = [
      await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 2, audio: false })),
      await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 3, audio: false })),
      await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 4, audio: false })),
    ];
    // 503 region_unavailable until a worker's first heartbeat.
    const submitted = await pollUntil(
      'a worker heartbeat (the region answers)',
      async () => {
        const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: uploads.map((id) => ({ upload_id: id })) },
        });
        return response.status === 202 ? response : undefined;
      },
      60_000,
      500,
    );
    const job = await waitForJob(api, account.apiKey, submitted.headers.get('location')!, undefined, 150_000);
    expect(job.status).toBe('succeeded');
    expect(job.items).toHaveLength(3);

    for (const item of job.items) {
      const download = await fetch(item.output.url);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).length).toBe(item.output.size_bytes);
    }

    // Charged exactly once: one authorise and one settlement in the ledger, no hold left.
    const money = await auditMoney(api, account.apiKey, [job], GRANT);
    expect(money.problems).toEqual([]);
    expect(money.chargedTotal).toBe(job.billing.estimated_credits);

    // Which worker ran each item (docs/api-decisions.md §11 items[i].worker): with three items and two idle
    // workers, both take part.
    const ranOn = job.items.map((item: { worker: string | null }) => item.worker);
    expect(ranOn.every((worker: string | null) => typeof worker === 'string')).toBe(true);
    expect(new Set(ranOn).size).toBe(2);

    // Nothing stays behind in a worker's own folder once its items are done: no file anywhere under it
    // (the worker keeps only its empty working root, src/processing/work-dirs.ts, while it runs).
    for (const dir of workerDirs) {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      expect(entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name)).toEqual([]);
      expect(entries.filter((entry) => entry.parentPath !== dir).map((entry) => entry.name)).toEqual([]);
    }
  }, 240_000);

  it("a long item's segments are encoded on both workers through the bucket, joined, and gone from it", async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
    const source = await keyframedSdrMp4({ width: 320, height: 180, seconds: 6 });
    const uploadId = await upload(api, account.apiKey, source);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, submitted.headers.get('location')!, undefined, 150_000);
    expect(job.status).toBe('succeeded');

    const segments: { worker: string }[] = await api.app
      .get(DataSource)
      .query(`SELECT worker FROM item_segments WHERE job_id = $1 AND status = 'succeeded'`, [job.job_id]);
    expect(segments.length).toBeGreaterThanOrEqual(2);
    expect(new Set(segments.map((segment) => segment.worker)).size).toBe(2);

    // The joined output, fetched through its signed link, has every frame of the source.
    const download = await fetch(job.items[0].output.url);
    expect(download.status).toBe(200);
    const output = join(scratch, 'joined.mp4');
    await writeFile(output, Buffer.from(await download.arrayBuffer()));
    expect(await decodedFrameCount(output)).toBe(await decodedFrameCount(source));

    const money = await auditMoney(api, account.apiKey, [job], GRANT);
    expect(money.problems).toEqual([]);
    expect(money.chargedTotal).toBe(job.billing.estimated_credits);

    // The temporary segments (source parts, encoded parts, the audio) are removed when the item ends.
    await pollUntil(
      'the segments to be removed from the bucket',
      async () => {
        const listed = await s3.send(
          new ListObjectsV2Command({ Bucket: `mj-two-${process.pid}`, Prefix: `${PREFIX}segments/` }),
        );
        return (listed.Contents ?? []).length === 0 || undefined;
      },
      15_000,
      200,
    );
  }, 240_000);
});
