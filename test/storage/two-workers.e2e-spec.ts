// Workers on other machines (issue 13): the API and two workers as separate processes, each with its own
// empty temp folder and no STORAGE_DIR in common, all on the S3 backend (a private Swift). Upload →
// 3-item job → items run on both workers → every output downloadable through its signed link →
// charged exactly once; the workers' folders are empty again afterwards.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditMoney, killAllWorkers, pollUntil, snapshotApp, spawnWorker } from '../chaos/support-processes';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startSwift, type SwiftServer } from '../support/swift';

const REGION = 's3-two';
const GRANT = 500;

describe('API and two worker processes sharing only the object store', () => {
  let swift: SwiftServer;
  let api: TestApi;
  let scratch: string;
  const workerDirs: string[] = [];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'mj-two-workers-'));
    const [started, app] = await Promise.all([startSwift(), snapshotApp(scratch)]);
    swift = started;
    const s3 = swift.env(`mj-two-${process.pid}`, 'two/');
    // The API's STORAGE_DIR is a folder of its own that no worker sees (and the S3 backend ignores).
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(scratch, 'api-')), ...s3 });
    for (const name of ['worker-a', 'worker-b']) {
      const own = await mkdtemp(join(scratch, `${name}-`));
      workerDirs.push(own);
      spawnWorker(
        {
          REGION,
          ...s3,
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

    // Which worker ran each item (API.md §11 items[i].worker): with three items and two idle
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
});
