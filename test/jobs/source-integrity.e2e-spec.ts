// A source_url is fetched twice: probed at submit, downloaded by the worker. These tests hold the
// worker to what the submit checked and priced (issue 12 items 1, 2 and 4), against the real API,
// worker, PostgreSQL, Redis and ffmpeg, with a loopback origin that can change its answer.
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { credits } from '../support/jobs';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { clipOfDuration, sdrMp4 } from '../fixtures/media';

describe('a source larger than MAX_SOURCE_BYTES is refused at submit when its size is known (item 4)', () => {
  let origin: MediaOrigin;
  let api: TestApi;
  let large: string;
  let small: string;

  beforeAll(async () => {
    origin = await startMediaOrigin();
    large = await sdrMp4({ width: 320, height: 180, seconds: 2 });
    small = await clipOfDuration(1);
    const limit = (await stat(large)).size - 1;
    expect((await stat(small)).size).toBeLessThanOrEqual(limit);
    api = await startApi({
      REGION: 'local',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-source-size-')),
      ALLOW_PRIVATE_URLS: '127.0.0.1',
      MAX_SOURCE_BYTES: String(limit),
      // The upload limit is not what holds a source: a larger one must not let it through.
      MAX_UPLOAD_BYTES: String(100 * 1024 * 1024),
    });
    // No worker: the region is made healthy by hand, and accepted jobs stay queued.
    const redis = new (await import('ioredis')).Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:local`, Date.now() + 3600_000, 'test-heartbeat');
    redis.disconnect();
  });
  afterAll(async () => {
    await api.close();
    await origin.close();
  });

  it('413 file_too_large with param on the input; nothing is held', async () => {
    const account = await createAccount(api, { credits: 100 });
    origin.serve('large.mp4', large);
    origin.serve('small.mp4', small);
    const refused = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: origin.url('small.mp4') }, { source_url: origin.url('large.mp4') }] },
    });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: 'file_too_large',
      type: 'invalid_request_error',
      param: 'inputs[1].source_url',
      details: { size_bytes: (await stat(large)).size, max_source_bytes: (await stat(large)).size - 1 },
    });
    expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 100, reserved_credits: 0 });

    const accepted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: origin.url('small.mp4') }] },
    });
    expect(accepted.status).toBe(202);
  });
});
