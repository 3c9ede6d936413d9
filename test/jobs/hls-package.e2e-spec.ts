// An sdr2hdr job whose output is an HLS package, end to end through a real API, worker, PostgreSQL, ffmpeg
// and local storage (docs/ladder-plan.md step 4): the submit resolves `output.package` and `output.ladder`
// into the stored spec (test/jobs/ladder-request.e2e-spec.ts), and the worker makes every rung
// in one run, checks each like a file, stores every file under the item's package prefix, and the job view
// and the webhook show the renditions; a spoiled rung fails its item, charged 0; retention and the storage
// sweeper treat the prefix's objects as the one output they are.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { STORAGE, type Storage } from '../../src/common/storage/storage';
import { StorageSweeper } from '../../src/processing/storage-sweeper';
import { RetentionPurge } from '../../src/processing/upkeep/retention-purge';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import {
  deleteRegisteredEndpoints,
  eventually,
  registerEndpoint,
  startReceiver,
  verify,
  type Receiver,
} from '../support/webhook-receiver';
import { startWorkerWithWrongOutputs } from '../support/wrong-output-runner';

const REGION = 'hls-package';

describe('an HLS package made by the worker', () => {
  let api: TestApi;
  let db: DataSource;
  let receiver: Receiver;
  let storageDir: string;
  let worker: Awaited<ReturnType<typeof startWorkerWithWrongOutputs>> | undefined;

  beforeAll(async () => {
    storageDir = await mkdtemp(join(tmpdir(), 'mj-hls-'));
    api = await startApi({ REGION, STORAGE_DIR: storageDir });
    db = api.app.get(DataSource);
    worker = await startWorkerWithWrongOutputs({
      REGION,
      STORAGE_DIR: storageDir,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
    });
    receiver = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    if (api) await deleteRegisteredEndpoints(api);
    await receiver?.stop();
    await worker?.close();
    await api?.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  async function objects(prefix: string): Promise<string[]> {
    const storage = worker!.app.get<Storage>(STORAGE);
    const keys: string[] = [];
    for await (const entry of storage.list(prefix)) keys.push(entry.key.slice(prefix.length));
    return keys.sort();
  }

  it('stores every rung under one prefix, shows the renditions, fails a spoiled rung’s item charged 0, and removes the whole prefix at expiry', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const endpoint = await registerEndpoint(api, account.apiKey, receiver.url('/hls'));
    worker!.runner.spoil.clear();
    worker!.runner.spoil.set(1, 'sdr_tags');
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 640, height: 360, seconds: 5 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: {
        inputs: [{ upload_id: uploadId }, { upload_id: uploadId }],
        output: { package: 'hls', ladder: [{ height: 360 }, { height: 180 }] },
      },
    });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;

    const view = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 300_000);
    expect(view.status).toBe('partially_succeeded');
    const [good, spoiled] = view.items;

    expect(good.status).toBe('succeeded');
    expect(good.charged_credits).toBeGreaterThan(0);
    expect(good.output.container).toBe('hls');
    expect(good.output.renditions).toEqual([
      expect.objectContaining({ codec: 'hevc', width: 640, height: 360, transfer: 'smpte2084', video_range: 'PQ' }),
      expect.objectContaining({ codec: 'hevc', width: 320, height: 180, transfer: 'smpte2084', video_range: 'PQ' }),
      expect.objectContaining({
        codec: 'h264',
        width: 640,
        height: 360,
        transfer: 'bt709',
        video_range: 'SDR',
        light: null,
      }),
    ]);
    // 5 s in the API's 4 s segments (LADDER_SEGMENT_SECONDS): 4 s and the last 1 s.
    for (const rendition of good.output.renditions) {
      expect(rendition).toMatchObject({ frame_rate: 30, segments: 2, duration_seconds: 5 });
      expect(rendition.bandwidth).toBeGreaterThanOrEqual(rendition.average_bandwidth);
      if (rendition.video_range === 'PQ')
        expect(rendition.light).toMatchObject({ mapping: 'reference', mastering_peak_nits: 1000 });
    }
    // Each rung checked like a file, then the package's boundaries and segment lengths.
    expect(good.checks.map((check: any) => [check.name, check.passed])).toEqual([
      ['hdr_signalling', true],
      ['frame_count', true],
      ['duration', true],
      ['round_trip_ssim', true],
      ['hdr_signalling', true],
      ['frame_count', true],
      ['duration', true],
      ['round_trip_ssim', true],
      ['sdr_signalling', true],
      ['frame_count', true],
      ['duration', true],
      ['segment_alignment', true],
      ['segment_durations', true],
    ]);
    expect(good.checks[0].expected).toMatch(/^hevc-360-pq: /);

    // The first rung of the second item was replaced by an SDR-tagged file: the item fails, charged 0.
    expect(spoiled).toMatchObject({ status: 'failed', charged_credits: 0, output: null });
    expect(spoiled.error).toMatchObject({ code: 'output_check_failed', details: { check: 'hdr_signalling' } });

    // Stored: the whole package under the asset's key (the prefix), nothing of the failed item.
    const [asset] = await db.query(
      `SELECT storage_key, container, content_type, size_bytes, media FROM assets WHERE job_id = $1 AND container = 'hls'`,
      [jobId],
    );
    expect(asset).toMatchObject({ container: 'hls', content_type: 'application/vnd.apple.mpegurl' });
    expect(asset.storage_key).toMatch(new RegExp(`^outputs/${account.accountId}/${jobId}/0-[0-9A-Za-z]+\\.hls/$`));
    expect(asset.media.renditions).toEqual(good.output.renditions);
    const stored = await objects(asset.storage_key);
    const files = (folder: string, segments: number) => [
      `${folder}/init.mp4`,
      `${folder}/playlist.m3u8`,
      ...Array.from({ length: segments }, (_, i) => `${folder}/seg-0000${i}.m4s`),
    ];
    expect(stored).toEqual(
      [
        'master.m3u8',
        ...files('audio', 2),
        ...files('h264-360-sdr', 2),
        ...files('hevc-180-pq', 2),
        ...files('hevc-360-pq', 2),
      ].sort(),
    );
    expect(await objects(`outputs/${account.accountId}/${jobId}/1`)).toEqual([]);

    // The webhook's items carry the same renditions.
    const delivery = await eventually(() =>
      receiver.received.find(
        (request) => request.path === '/hls' && verify(endpoint.secret, request).data.job?.job_id === jobId,
      ),
    );
    const event = verify(endpoint.secret, delivery);
    expect((event.data.items?.[0].output as any)?.renditions).toEqual(good.output.renditions);

    // The sweeper keeps a live package's objects (the asset's key is their prefix) …
    await worker!.app.get(StorageSweeper).sweep(Date.now() + (api.config.storageSweepAfterSeconds + 60) * 1000);
    expect(await objects(asset.storage_key)).toEqual(stored);
    // … and the retention purge removes every one of them once the asset expires.
    await db.query(`UPDATE assets SET expires_at = now() - interval '1 second' WHERE job_id = $1`, [jobId]);
    await worker!.app.get(RetentionPurge).purge();
    expect(await objects(asset.storage_key)).toEqual([]);
  }, 480_000);
});
