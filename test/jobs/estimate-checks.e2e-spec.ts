// The estimate runs the submit's media rules (issue 29 item 13): a described file (`inputs[i].media`) and a
// probed one are judged by the same rules, so the estimate never prices as accepted what the service will
// refuse or fail — a zero-length input is invalid_media, as a submit of such a file is; a picture over the
// workers' budget (WORKER_MAX_PIXELS) is the out_of_memory the job would end with, charged nothing.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { workersKey } from '../../src/queues/keys';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';
import { upload } from '../support/jobs';
import { sdrMp4 } from '../fixtures/media';

const REGION = 'estimate-checks';

describe('the estimate judges media like the submit', () => {
  let api: TestApi;
  let small: TestApi;

  beforeAll(async () => {
    const storage = await mkdtemp(join(tmpdir(), 'mj-estimate-checks-'));
    api = await startApi({ REGION, STORAGE_DIR: storage });
    // The same store, with workers whose budget is below 640×360.
    small = await startApi({ REGION, STORAGE_DIR: storage, WORKER_MAX_PIXELS: String(320 * 180) });
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(workersKey(api.config, REGION), Date.now() + 3600_000, 'test-worker');
    redis.disconnect();
  });
  afterAll(async () => {
    await api?.close();
    await small?.close();
  });

  const estimate = (target: TestApi, account: TestAccount, payload: unknown, path = '/v1/sdr2hdr/jobs/estimate') =>
    call(target, 'POST', path, { key: account.apiKey, body: payload });

  it('7680×4320 over WORKER_MAX_PIXELS: not accepted, the out_of_memory error the job would end with', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const response = await estimate(api, account, {
      inputs: [{ media: { duration_seconds: 10, width: 7680, height: 4320 } }],
      output: { resolution: '2160p' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      accepted: false,
      error: {
        code: 'out_of_memory',
        type: 'processing_error',
        param: 'inputs[0].media',
        retryable: false,
        details: { width: 7680, height: 4320, max_pixels: 3840 * 2160 },
      },
    });
    // Within the budget it is accepted.
    const uhd = await estimate(api, account, {
      inputs: [{ media: { duration_seconds: 10, width: 3840, height: 2160 } }],
      output: { resolution: '2160p' },
    });
    expect(uhd.body).toMatchObject({ accepted: true, error: null, estimated_credits: 80 });
  });

  it('an uploaded file over the budget gets the same verdict as the same file described', async () => {
    const account = await createAccount(small, { plan: 'pro', credits: 1000 });
    const uploadId = await upload(small, account.apiKey, await sdrMp4({ width: 640, height: 360, seconds: 1 }));
    const probed = await estimate(small, account, { inputs: [{ upload_id: uploadId }] });
    const described = await estimate(small, account, {
      inputs: [{ media: { duration_seconds: 1, width: 640, height: 360 } }],
    });
    for (const response of [probed, described]) {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        accepted: false,
        error: { code: 'out_of_memory', details: { width: 640, height: 360, max_pixels: 320 * 180 } },
      });
    }
    expect(probed.body.error.param).toBe('inputs[0].upload_id');
  });

  it('duration_seconds 0 is invalid_media (a file without media), for video and audio, as at submit', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const video = await estimate(api, account, {
      inputs: [{ media: { duration_seconds: 0, width: 640, height: 360 } }],
    });
    expectError(api, video, 'invalid_media', 'inputs[0].media');
    const audio = await estimate(
      api,
      account,
      { inputs: [{ media: { duration_seconds: 0 } }] },
      '/v1/audio/jobs/estimate',
    );
    expectError(api, audio, 'invalid_media', 'inputs[0].media');
    // The duration limit keeps its own answer.
    expectError(
      api,
      await estimate(api, account, {
        inputs: [{ media: { duration_seconds: api.config.maxDurationSeconds + 1, width: 640, height: 360 } }],
      }),
      'duration_exceeded',
      'inputs[0].media',
    );
  });
});
