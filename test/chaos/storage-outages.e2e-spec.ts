// Object storage under failure (issue 13), on the S3 backend against a private Swift: a worker SIGKILLed
// in the middle of uploading an output leaves no multipart upload behind once the job has been
// recovered; the store stopped for 10 s during a job ends in success once it is back, or in a
// retryable failure charged 0 — never a lost hold.
import { ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createS3Client } from '../../src/common/storage/s3-client';
import { sdrMp4, speechWav } from '../fixtures/media';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startSwift, type SwiftServer } from '../support/swift';
import {
  auditMoney,
  killAllWorkers,
  logMeasurement,
  pollUntil,
  snapshotApp,
  sleep,
  spawnWorker,
  type WorkerProcess,
} from '../support/processes';

const REGION = 'chaos-store';
const GRANT = 2000;
const exec = promisify(execFile);

describe('object storage failures', () => {
  let swift: SwiftServer;
  let api: TestApi;
  let s3: S3Client;
  let bucket: string;
  let scratch: string;
  let app: string;
  let workerEnv: Record<string, string>;

  async function openMultipartUploads(): Promise<string[]> {
    const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    return (listed.Uploads ?? []).map((entry) => entry.Key ?? '');
  }

  function worker(name: string, extra: Record<string, string> = {}): WorkerProcess {
    return spawnWorker({ ...workerEnv, ...extra }, { app, logFile: join(scratch, `${name}.log`) });
  }

  async function submit(key: string, path: string, body: Record<string, unknown>): Promise<string> {
    const submitted = await pollUntil(
      'a worker heartbeat (the region answers)',
      async () => {
        const response = await call(api, 'POST', path, { key, body });
        return response.status === 202 ? response : undefined;
      },
      60_000,
      250,
    );
    return submitted.headers.get('location')!;
  }

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'mj-chaos-store-'));
    const [started, snapshot] = await Promise.all([startSwift(), snapshotApp(scratch)]);
    swift = started;
    app = snapshot;
    bucket = `mj-chaos-${process.pid}`;
    const env = swift.env(bucket, 'chaos/');
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(scratch, 'api-')), ...env });
    const settings = api.config.storage;
    if (settings.backend !== 's3') throw new Error('the chaos stack must run on S3');
    s3 = createS3Client({ ...settings, prefix: '' });
    workerEnv = {
      REGION,
      ...env,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
      // A dead worker's job is taken again within seconds.
      WORKER_LOCK_MS: '2000',
      WORKER_RECONCILE_MS: '2000',
      WORKER_STALE_JOB_SECONDS: '10',
      TMPDIR: scratch, // a SIGKILLed worker never removes its work folder: keep it in ours
    };
  }, 180_000);

  afterAll(async () => {
    await killAllWorkers();
    await api?.close();
    await swift?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('a worker SIGKILLed while uploading an output leaves no multipart upload after recovery', async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
    // A WAV output over SINGLE_PUT_MAX_BYTES (smaller files go up in one PUT, which a kill leaves no trace
    // of): ~200 s of 96 kHz stereo speech (~73 MiB), so the worker stores it as a multipart upload that
    // can be cut off half-way.
    const input = join(scratch, 'long-speech.wav');
    await exec('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-stream_loop',
      '65',
      '-i',
      await speechWav(),
      '-ar',
      '96000',
      '-ac',
      '2',
      '-c:a',
      'pcm_s16le',
      input,
    ]);
    const uploadId = await upload(api, account.apiKey, input, 'audio/wav');
    const first = worker('first');
    const location = await submit(account.apiKey, '/v1/audio/jobs', {
      inputs: [{ upload_id: uploadId }],
      output: { container: 'wav' },
    });

    // Kill the worker the moment its output's multipart upload exists (parts on their way).
    const cutOff = await pollUntil(
      'the output multipart upload to start',
      async () => (await openMultipartUploads()).find((key) => key.includes('/outputs/')),
      120_000,
      20,
    );
    await first.kill();
    expect(await openMultipartUploads()).toContain(cutOff);

    // Recovery: another worker takes the job again; its sweeper aborts what the dead one left.
    const second = worker('second', { STORAGE_SWEEP_AFTER_SECONDS: '8' });
    const job = await waitForJob(api, account.apiKey, location, undefined, 150_000);
    expect(job.status).toBe('succeeded');
    const waitedMs = Date.now();
    await pollUntil('no multipart upload left', async () => (await openMultipartUploads()).length === 0, 60_000, 500);
    logMeasurement('storage-sigkill-upload', { cut_off: cutOff, swept_after_ms: Date.now() - waitedMs });

    const download = await fetch(job.items[0].output.url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).length).toBe(job.items[0].output.size_bytes);
    const money = await auditMoney(api, account.apiKey, [job], GRANT);
    expect(money.problems).toEqual([]);
    await second.kill();
  }, 300_000);

  it('the store stopped for 10 s during a job: success once it is back, or a retryable failure charged 0', async () => {
    const account = await createAccount(api, { plan: 'enterprise', credits: GRANT });
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 640, height: 360, seconds: 6 }));
    worker('outage');
    const location = await submit(account.apiKey, '/v1/sdr2hdr/jobs', { inputs: [{ upload_id: uploadId }] });
    await pollUntil(
      'the job to be processing',
      async () => (await call(api, 'GET', location, { key: account.apiKey })).body.status !== 'queued',
      60_000,
      50,
    );
    await swift.stopProxy();
    await sleep(10_000);
    await swift.startProxy();
    const job = await waitForJob(api, account.apiKey, location, undefined, 150_000);
    logMeasurement('storage-outage-10s', { status: job.status, item_error: job.items[0].error?.code ?? null });

    if (job.status === 'succeeded') {
      const download = await fetch(job.items[0].output.url);
      expect(download.status).toBe(200);
    } else {
      expect(job.status).toBe('failed');
      expect(job.items[0].error).toMatchObject({ code: 'upstream_error', retryable: true });
      expect(job.billing).toMatchObject({ charged_credits: 0, refunded: true, state: 'released' });
    }
    // Never a lost hold: one authorise and one settlement, nothing reserved afterwards.
    const money = await auditMoney(api, account.apiKey, [job], GRANT);
    expect(money.problems).toEqual([]);
    expect((await call(api, 'GET', '/v1/account/credits', { key: account.apiKey })).body.reserved_credits).toBe(0);
  }, 300_000);
});
