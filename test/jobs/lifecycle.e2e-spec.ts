// A job's whole life against the real Postgres, Redis, BullMQ worker and ffmpeg: submit, hold,
// process, settle or release, outputs, and the failure codes that come from real causes.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import { call, createAccount, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { probeVideoStream } from '../support/media-checks';
import { startStack } from '../support/worker';
import { encryptedMp4, measureEbur128, roomToneWav, sdrMp4, speechWav } from '../fixtures/media';

const REGION = 'life';

describe('job lifecycle with real ffmpeg', () => {
  let api: TestApi;
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    stack = await startStack({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-life-')) });
    api = stack.api;
  });
  afterAll(() => stack.close());

  it('sdr2hdr: HDR10 output that mediainfo recognises, charged exactly the estimate', async () => {
    const account = await createAccount(api, { credits: 100 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], metadata: { ref: 'A-17' } },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.headers.get('location')).toBe(`/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(submitted.body).toMatchObject({
      object: 'job',
      api: 'sdr2hdr',
      status: 'queued',
      metadata: { ref: 'A-17' },
    });
    const estimate = submitted.body.billing.estimated_credits;
    // 320×180 is the ≤720p tier: one credit per started second.
    expect(estimate).toBe(Math.ceil(submitted.body.items[0].duration_seconds));
    expect(submitted.body.billing).toEqual({
      estimated_credits: estimate,
      charged_credits: 0,
      refunded: false,
      state: 'authorised',
    });
    const held = await credits(api, account.apiKey);
    expect(held).toMatchObject({ balance_credits: 100, reserved_credits: estimate, available_credits: 100 - estimate });

    const job = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    expect(job.status).toBe('succeeded');
    expect(job.progress).toBe(1);
    expect(job.error).toBeNull();
    expect(job.billing).toEqual({
      estimated_credits: estimate,
      charged_credits: estimate,
      refunded: false,
      state: 'settled',
    });
    const after = await credits(api, account.apiKey);
    expect(after).toMatchObject({
      balance_credits: 100 - estimate,
      reserved_credits: 0,
      available_credits: 100 - estimate,
    });

    const output = job.items[0].output;
    expect(output).toMatchObject({ container: 'mp4', video: { codec: 'hevc', hdr: 'HDR10' } });
    const download = await fetch(output.url);
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(output.size_bytes);
    const file = join(await mkdtemp(join(tmpdir(), 'mj-out-')), 'out.mp4');
    await writeFile(file, bytes);
    const hdr = await readMediainfoHdr(file);
    expect(hdr).toMatchObject({ isHdr10: true, transfer: 'PQ', colourPrimaries: 'BT.2020' });
    expect(await probeVideoStream(file)).toEqual({
      codec_name: 'hevc',
      pix_fmt: 'yuv420p10le',
      color_space: 'bt2020nc',
      color_transfer: 'smpte2084',
      color_primaries: 'bt2020',
      // The container's own mdcv and clli boxes (mastering display, content light level), which ffprobe reads.
      side_data_list: [{}, {}],
    });

    // Range requests on the signed link; a tampered link is asset_not_found.
    const ranged = await fetch(output.url, { headers: { range: 'bytes=0-99' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 0-99/${output.size_bytes}`);
    expect((await ranged.arrayBuffer()).byteLength).toBe(100);
    const tampered = await fetch(output.url.replace(/signature=.{4}/, 'signature=AAAA'));
    expect(tampered.status).toBe(404);
    expect(((await tampered.json()) as { error: { code: string } }).error.code).toBe('asset_not_found');

    const ledger = (await call(api, 'GET', '/v1/account/ledger', { key: account.apiKey })).body.data;
    expect(ledger.map((entry: { kind: string }) => entry.kind)).toEqual(['capture', 'authorise', 'grant']);

    // A finished job cannot be cancelled.
    const cancel = await call(api, 'POST', `/v1/sdr2hdr/jobs/${job.job_id}/cancel`, { key: account.apiKey });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe('job_not_cancellable');
  });

  it('drm_protected: accepted, then failed in the worker — charged 0, refunded, balance untouched', async () => {
    const account = await createAccount(api, { credits: 50 });
    const uploadId = await upload(api, account.apiKey, await encryptedMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({
      type: 'processing_error',
      code: 'drm_protected',
      retryable: false,
      request_id: expect.stringMatching(/^req_/),
    });
    expect(job.error.doc_url).toBe(`${api.config.docsUrl}/errors.html#drm_protected`);
    expect(job.billing).toEqual({
      estimated_credits: submitted.body.billing.estimated_credits,
      charged_credits: 0,
      refunded: true,
      state: 'released',
    });
    expect(await credits(api, account.apiKey)).toMatchObject({
      balance_credits: 50,
      reserved_credits: 0,
      available_credits: 50,
    });
  });

  it('partial failure: charged only the succeeded items, breakdown in error.details', async () => {
    const account = await createAccount(api, { credits: 50 });
    const good = await upload(api, account.apiKey, await sdrMp4());
    const bad = await upload(api, account.apiKey, await encryptedMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: good }, { upload_id: bad }] },
    });
    expect(submitted.status).toBe(202);
    const [goodEstimate, badEstimate] = submitted.body.items.map(
      (item: { estimated_credits: number }) => item.estimated_credits,
    );
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job.status).toBe('partially_succeeded');
    expect(job.billing).toEqual({
      estimated_credits: goodEstimate + badEstimate,
      charged_credits: goodEstimate,
      refunded: false,
      state: 'settled',
    });
    expect(job.error.code).toBe('drm_protected');
    expect(job.error.details).toEqual({
      items: [
        {
          index: 0,
          status: 'succeeded',
          estimated_credits: goodEstimate,
          charged_credits: goodEstimate,
          error_code: null,
        },
        { index: 1, status: 'failed', estimated_credits: badEstimate, charged_credits: 0, error_code: 'drm_protected' },
      ],
      succeeded_items: 1,
      failed_items: 1,
      estimated_credits: goodEstimate + badEstimate,
      charged_credits: goodEstimate,
    });
    expect(job.items[0].output).not.toBeNull();
    expect(job.items[1]).toMatchObject({ status: 'failed', output: null, error: { code: 'drm_protected' } });
    expect(await credits(api, account.apiKey)).toMatchObject({
      balance_credits: 50 - goodEstimate,
      reserved_credits: 0,
    });
  });

  it('audio: speech normalised to the target loudness (±1 LU), WAV output', async () => {
    const account = await createAccount(api, { plan: 'starter', credits: 50 });
    const uploadId = await upload(api, account.apiKey, await speechWav(), 'audio/wav');
    const submitted = await call(api, 'POST', '/v1/audio/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output: { target_lufs: -16, container: 'wav' } },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, `/v1/audio/jobs/${submitted.body.job_id}`);
    expect(job.status).toBe('succeeded');
    const download = await fetch(job.items[0].output.url);
    const file = join(await mkdtemp(join(tmpdir(), 'mj-audio-')), 'out.wav');
    await writeFile(file, Buffer.from(await download.arrayBuffer()));
    const measured = await measureEbur128(file);
    expect(Math.abs(measured.integratedLufs - -16)).toBeLessThanOrEqual(1);
  });

  it('audio without speech → failed no_speech_detected, charged 0', async () => {
    const account = await createAccount(api, { plan: 'starter', credits: 50 });
    const uploadId = await upload(api, account.apiKey, await roomToneWav(), 'audio/wav');
    const submitted = await call(api, 'POST', '/v1/audio/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, `/v1/audio/jobs/${submitted.body.job_id}`);
    expect(job).toMatchObject({
      status: 'failed',
      error: { code: 'no_speech_detected' },
      billing: { charged_credits: 0, refunded: true },
    });
    expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 50, reserved_credits: 0 });
  });

  it("another account's job is job_not_found, like an unknown one", async () => {
    const owner = await createAccount(api, { credits: 50 });
    const other = await createAccount(api, { credits: 50 });
    const uploadId = await upload(api, owner.apiKey, await sdrMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: owner.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    const foreign = await call(api, 'GET', `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, { key: other.apiKey });
    const unknown = await call(api, 'GET', `/v1/sdr2hdr/jobs/job_0000000000000000000000`, { key: other.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('job_not_found');
    expect({ ...foreign.body.error, request_id: null }).toEqual({ ...unknown.body.error, request_id: null });
    // Nor can the other account use the owner's upload.
    const borrowed = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: other.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(borrowed.body.error).toMatchObject({ code: 'asset_not_found', param: 'inputs[0].upload_id' });
    await waitForJob(api, owner.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
  });
});
