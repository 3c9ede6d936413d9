// The API and a worker on STORAGE_BACKEND=s3 against a private Swift (s3api): uploads stream into the
// bucket, jobs read inputs from and write outputs to it, downloads keep their contract (signed link,
// Range, 404 after expiry or deletion), retention and the sweeper delete objects, and an outage of
// the store is a 503 envelope at the API and a retryable upstream_error on a running item.
import {
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { DataSource } from 'typeorm';
import { createS3Client } from '../../src/common/storage/s3-client';
import { StorageSweeper } from '../../src/processing/storage-sweeper';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { STORAGE, type Storage } from '../../src/common/storage/storage';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { startSwift, type SwiftServer } from '../support/swift';
import { startStack } from '../support/worker';
import { expectError } from '../support/error-checks';
import { sdrMp4 } from '../fixtures/media';

const PREFIX = 'mj-e2e/';

/**
 * POSTs `total` bytes chunked (no Content-Length) and stops sending as soon as the answer arrives, then
 * closes the connection, as a client that gave up would (so the API can shut down afterwards).
 */
function chunkedUpload(
  base: string,
  apiKey: string,
  total: number,
): Promise<{ status: number; connection?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}/v1/uploads`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
    });
    let sent = 0;
    let answered = false;
    const chunk = Buffer.alloc(256 * 1024, 7);
    const pump = (): void => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      if (!answered) request.end();
    };
    request.on('response', (response) => {
      answered = true;
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => (body += part));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, body });
      });
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    pump();
  });
}

describe('API and worker on the S3 backend (real Swift)', () => {
  let swift: SwiftServer;
  let origin: MediaOrigin;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let s3: S3Client;
  let bucket: string;

  async function objectKeys(prefix = ''): Promise<string[]> {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${PREFIX}${prefix}` }));
    return (listed.Contents ?? []).map((object) => object.Key!.slice(PREFIX.length)).sort();
  }

  async function multipartUploads(): Promise<number> {
    return ((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).length;
  }

  /** A finished one-item sdr2hdr job of a fresh account, from an upload. */
  async function finishedJob(): Promise<{ apiKey: string; job: any; uploadId: string }> {
    const account = await createAccount(api, { credits: 100 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    return { apiKey: account.apiKey, job, uploadId };
  }

  beforeAll(async () => {
    [swift, origin] = await Promise.all([startSwift(), startMediaOrigin()]);
    bucket = `mj-e2e-${process.pid}`;
    const env = swift.env(bucket, PREFIX);
    // The bucket does not exist yet: the API creates it at start-up (docs/api-decisions.md §11).
    stack = await startStack({ REGION: 's3-e2e', ALLOW_PRIVATE_URLS: '127.0.0.1', ...env });
    api = stack.api;
    const settings = api.config.storage;
    if (settings.backend !== 's3') throw new Error('the test stack must run on S3');
    s3 = createS3Client({ ...settings, prefix: '' });
  }, 180_000);

  afterAll(async () => {
    s3?.destroy();
    await stack?.close();
    await origin?.close();
    await swift?.stop();
  });

  it('an upload streams into the bucket with its SHA-256; over the limit nothing is left, not even parts', async () => {
    const account = await createAccount(api);
    const body = await readFile(await sdrMp4());
    const response = await call(api, 'POST', '/v1/uploads', {
      key: account.apiKey,
      rawBody: body,
      headers: { 'content-type': 'video/mp4' },
    });
    expect(response.status).toBe(201);
    expect(response.body.sha256).toBe(createHash('sha256').update(body).digest('hex'));
    expect(await objectKeys('uploads/')).toContain(`uploads/${account.accountId}/${response.body.upload_id}`);

    // Chunked (no Content-Length) and larger than one 8 MiB part: the limit trips mid-multipart, on a
    // second API with a 20 MiB limit on the same bucket.
    const before = await objectKeys();
    const limited = await startApi({
      REGION: 's3-e2e',
      MAX_UPLOAD_BYTES: String(20 * 1024 * 1024),
      ...swift.env(bucket, PREFIX),
    });
    try {
      const answer = await chunkedUpload(limited.url, account.apiKey, 48 * 1024 * 1024);
      expect(answer.status).toBe(413);
      // The rest of the body is not read: the API closes the connection (else it would hang open).
      expect(answer.connection).toBe('close');
      expect(JSON.parse(answer.body).error.code).toBe('file_too_large');
    } finally {
      await limited.close();
    }
    expect(await objectKeys()).toEqual(before);
    expect(await multipartUploads()).toBe(0);
  });

  it('a job reads its input from and writes its output to the bucket; the signed link serves it with Range', async () => {
    const { apiKey, job } = await finishedJob();
    expect(job.status).toBe('succeeded');
    const output = job.items[0].output;
    const keys = await objectKeys(`outputs/`);
    // One output for the one run of item 0 (outputKey: {index}-{run}.{container}), and its light map beside
    // it under the same name (an sdr2hdr item's false-colour PNG, output.light_map_url).
    const stored = keys.filter((key) => key.includes(job.job_id)).sort();
    expect(stored).toEqual([
      expect.stringMatching(/\/0-[0-9A-Za-z]+\.mp4$/),
      expect.stringMatching(/\/0-[0-9A-Za-z]+\.png$/),
    ]);
    expect(stored[1].replace(/\.png$/, '')).toBe(stored[0].replace(/\.mp4$/, ''));

    const whole = await fetch(output.url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.length).toBe(output.size_bytes);

    const part = await fetch(output.url, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${output.size_bytes}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(100, 200));

    const suffix = await fetch(output.url, { headers: { range: 'bytes=-10' } });
    expect(suffix.status).toBe(206);
    expect(Buffer.from(await suffix.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 10));
    expect((await credits(api, apiKey)).reserved_credits).toBe(0);
  });

  it('a deleted object or an expired asset gives 404 asset_not_found', async () => {
    const { job } = await finishedJob();
    const storage = api.app.get<Storage>(STORAGE);
    const db = api.app.get(DataSource);
    const [{ storage_key: key }] = (await db.query(
      `SELECT storage_key FROM assets WHERE job_id = $1 AND container <> 'png'`,
      [job.job_id],
    )) as { storage_key: string }[];
    await storage.remove(key);
    const gone = await fetch(job.items[0].output.url);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('asset_not_found');

    const second = await finishedJob();
    await db.query(`UPDATE assets SET expires_at = now() - interval '1 second' WHERE job_id = $1`, [second.job.job_id]);
    const expired = await fetch(second.job.items[0].output.url);
    expect(expired.status).toBe(404);
  });

  it('retention deletes the objects with their rows', async () => {
    const { job, uploadId } = await finishedJob();
    const db = api.app.get(DataSource);
    await db.query(`UPDATE assets SET expires_at = now() - interval '1 second' WHERE job_id = $1`, [job.job_id]);
    await db.query(`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [uploadId]);
    // The worker's hourly retention task.
    await stack.worker.app.get(RetentionPurge).purge();
    const keys = await objectKeys();
    expect(keys.filter((key) => key.includes(job.job_id) || key.includes(uploadId))).toEqual([]);
  });

  it('the sweeper removes outputs nothing points at and unfinished multipart uploads, and keeps the rest', async () => {
    const { job } = await finishedJob();
    const orphan = `outputs/acct_dead/job_dead${Date.now()}/0.mp4`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${PREFIX}${orphan}`, Body: 'left by a dead worker' }));
    await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${PREFIX}outputs/acct_dead/x/1.mp4` }));
    const sweeper = stack.worker.app.get(StorageSweeper);
    // As if STORAGE_SWEEP_AFTER_SECONDS had passed for everything stored so far.
    const result = await sweeper.sweep(Date.now() + (api.config.storageSweepAfterSeconds + 60) * 1000);
    expect(result.abortedWrites).toBeGreaterThanOrEqual(1);
    const keys = await objectKeys();
    expect(keys).not.toContain(orphan);
    // A live asset stays: the output and its light map.
    expect(keys.filter((key) => key.includes(job.job_id)).map((key) => key.split('.').pop())).toEqual(['mp4', 'png']);
    expect(await multipartUploads()).toBe(0);
    const download = await fetch(job.items[0].output.url);
    expect(download.status).toBe(200);
  });

  it('the sweeper removes a segment part left behind by an ended job and keeps one of an open job', async () => {
    const { job } = await finishedJob();
    // An open job (in a region no worker serves, so it stays open), made by hand.
    const account = await createAccount(api);
    const openJob = `job_open${Date.now()}`;
    await api.app.get(DataSource).query(
      `INSERT INTO jobs (id, account_id, api, status, region, output_options, estimated_credits, charged_credits,
                           billing_state, processed_seconds, request_id)
         VALUES ($1, $2, 'sdr2hdr', 'processing', 'nowhere', '{}', 0, 0, 'authorised', 0, 'req_open')`,
      [openJob, account.accountId],
    );
    // What a segment-parallel item stores while it runs (src/common/storage/storage.ts segmentsPrefix).
    const leftBehind = `segments/${job.job_id}/0/enc-1.mp4`;
    const inUse = `segments/${openJob}/0/src-0.mp4`;
    for (const key of [leftBehind, inUse])
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${PREFIX}${key}`, Body: 'segment part' }));
    const sweeper = stack.worker.app.get(StorageSweeper);
    await sweeper.sweep(Date.now() + (api.config.storageSweepAfterSeconds + 60) * 1000);
    const keys = await objectKeys('segments/');
    expect(keys).not.toContain(leftBehind);
    expect(keys).toContain(inUse);
  });

  describe('while the store is down', () => {
    it('uploads, submits of uploaded inputs and downloads answer 503 service_unavailable (retryable)', async () => {
      const { apiKey, job, uploadId } = await finishedJob();
      await swift.stopProxy();
      try {
        const uploadResponse = await call(api, 'POST', '/v1/uploads', {
          key: apiKey,
          rawBody: Buffer.alloc(1000),
          headers: { 'content-type': 'video/mp4' },
        });
        expectError(api, uploadResponse, 'service_unavailable');
        const submit = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: apiKey,
          body: { inputs: [{ upload_id: uploadId }] },
        });
        expectError(api, submit, 'service_unavailable');
        const download = await fetch(job.items[0].output.url);
        expect(download.status).toBe(503);
        expect((await credits(api, apiKey)).reserved_credits).toBe(0);
      } finally {
        await swift.startProxy();
      }
    });

    it('a running item whose output cannot be stored (the store stays down) ends upstream_error (retryable), charged 0', async () => {
      const account = await createAccount(api, { credits: 100 });
      origin.serve('clip.mp4', await sdrMp4());
      // A URL source needs no store at submit; the store is gone by the time the output is written.
      await swift.stopProxy();
      try {
        const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
          key: account.apiKey,
          body: { inputs: [{ source_url: origin.url('clip.mp4') }] },
        });
        expect(submitted.status).toBe(202);
        const job = await waitForJob(api, account.apiKey, submitted.headers.get('location')!, undefined, 120_000);
        expect(job.status).toBe('failed');
        expect(job.items[0].error).toMatchObject({ code: 'upstream_error', retryable: true });
        expect(job.billing).toMatchObject({ charged_credits: 0, refunded: true, state: 'released' });
      } finally {
        await swift.startProxy();
      }
      expect(await credits(api, account.apiKey)).toMatchObject({ reserved_credits: 0, balance_credits: 100 });
    }, 150_000); // the worker rides out about 30 s of outage before it gives up
  });
});
