// The ladder's request, spec and price (issue 41, docs/ladder-plan.md step 3): `output.package`,
// `output.ladder` and `output.codecs` are validated (each bad value a 400 naming its param), resolved once
// into the stored spec (jobs.output_spec), and priced per rung in the estimate and the hold. The worker
// does not make packages on this step: no worker consumes this file's region, so submitted jobs stay queued
// and are cancelled (their hold released) once the API side is checked.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { workersKey } from '../../src/queues/keys';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { expectError } from '../support/error-checks';
import { sdrMp4, speechWav } from '../fixtures/media';

const REGION = 'ladder-request';

describe('output.package, output.ladder, output.codecs (sdr2hdr)', () => {
  let api: TestApi;
  let db: DataSource;
  let account: TestAccount;
  let clip1080: string;

  beforeAll(async () => {
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-ladder-request-')) });
    db = api.app.get(DataSource);
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(workersKey(api.config, REGION), Date.now() + 3600_000, 'test-0');
    redis.disconnect();
    account = await createAccount(api, { plan: 'pro', credits: 100_000 });
    clip1080 = await sdrMp4({ width: 1920, height: 1080, seconds: 2, fps: 30 });
  });
  afterAll(() => api.close());

  /** A described 10 s 1080p file: the estimate prices it without an upload. */
  const described = (width = 1920, height = 1080) => [{ media: { duration_seconds: 10, width, height } }];
  const estimate = (output: unknown, inputs: unknown = described(), who = account) =>
    call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', { key: who.apiKey, body: { inputs, output } });

  it.each([
    [{ package: 'dash' }, 'output.package'],
    [{ package: 'hls', ladder: [] }, 'output.ladder'],
    [{ package: 'hls', ladder: {} }, 'output.ladder'],
    [{ package: 'hls', ladder: [{ height: 1080 }, { height: 721 }] }, 'output.ladder[1].height'],
    [{ package: 'hls', ladder: [{ height: 1080 }, { height: 142 }] }, 'output.ladder[1].height'],
    [{ package: 'hls', ladder: [{ height: 2162 }] }, 'output.ladder[0].height'],
    [{ package: 'hls', ladder: [{ height: '720' }] }, 'output.ladder[0].height'],
    [{ package: 'hls', ladder: [{ height: 720.5 }] }, 'output.ladder[0].height'],
    [{ package: 'hls', ladder: [{ height: 720, width: 1280 }] }, 'output.ladder[0].width'],
    [{ package: 'hls', ladder: [{ height: 720 }, { height: 720 }] }, 'output.ladder'],
    [{ package: 'hls', ladder: [1080] }, 'output.ladder[0]'],
    [{ package: 'hls', ladder: [[{ height: 720 }]] }, 'output.ladder'],
    [{ package: 'hls', ladder: [2160, 1440, 1080, 720, 540, 360, 144].map((height) => ({ height })) }, 'output.ladder'],
    [{ package: 'hls', codecs: ['av1'] }, 'output.codecs'],
    [{ package: 'hls', codecs: ['hevc', 'vp9'] }, 'output.codecs'],
    [{ package: 'hls', codecs: ['hevc', 'hevc'] }, 'output.codecs'],
    [{ package: 'hls', codecs: [] }, 'output.codecs'],
    [{ package: 'hls', codecs: 'hevc' }, 'output.codecs'],
    // A ladder and codecs describe a package: with a file (named or the default) they are refused.
    [{ ladder: [{ height: 720 }] }, 'output.ladder'],
    [{ package: 'file', ladder: [{ height: 720 }] }, 'output.ladder'],
    [{ package: 'file', codecs: ['hevc'] }, 'output.codecs'],
    // A file's size and container mean nothing to a package: refused rather than ignored.
    [{ package: 'hls', resolution: '720p' }, 'output.resolution'],
    [{ package: 'hls', container: 'mp4' }, 'output.container'],
  ])('%j → 400 invalid_parameter, param %s (estimate and submit alike)', async (output, param) => {
    expectError(api, await estimate(output), 'invalid_parameter', param);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ source_url: 'https://media.example.com/clip.mp4' }], output },
    });
    expectError(api, submitted, 'invalid_parameter', param);
  });

  it('a missing rung height is missing_parameter; null fields mean the defaults', async () => {
    expectError(api, await estimate({ package: 'hls', ladder: [{}] }), 'missing_parameter', 'output.ladder[0].height');
    const nulls = await estimate({ package: 'hls', ladder: null, codecs: null, resolution: null, container: null });
    expect(nulls.status).toBe(200);
    expect(nulls.body).toEqual((await estimate({ package: 'hls' })).body);
  });

  it('a described video of no size is refused, not priced as no picture (file and package alike)', async () => {
    for (const output of [{}, { package: 'hls' }]) {
      const noWidth = [{ media: { duration_seconds: 10, width: null, height: 1080 } }];
      expectError(api, await estimate(output, noWidth), 'missing_parameter', 'inputs[0].media.width');
    }
  });

  it('a ladder on an audio job → 400 naming output.ladder', async () => {
    const wav = await speechWav();
    const audio = await createAccount(api, { plan: 'pro', credits: 100 });
    const uploadId = await upload(api, audio.apiKey, wav, 'audio/wav');
    for (const path of ['/v1/audio/jobs/estimate', '/v1/audio/jobs']) {
      const response = await call(api, 'POST', path, {
        key: audio.apiKey,
        body: { inputs: [{ upload_id: uploadId }], output: { ladder: [{ height: 720 }] } },
      });
      expectError(api, response, 'invalid_parameter', 'output.ladder');
    }
  });

  it("the estimate of a 1080p source's default ladder is the sum of its rungs' prices, per item and in total", async () => {
    const response = await estimate({ package: 'hls' });
    expect(response.status).toBe(200);
    const rung = (codec: string, range: string, width: number, height: number, credits: number) => ({
      codec,
      video_range: range,
      width,
      height,
      bitrate_kbps: expect.any(Number),
      estimated_credits: credits,
    });
    // 10 s each, at the file prices of their pictures: 2 a second up to 1080p, 1 up to 720p.
    const rungs = [
      rung('hevc', 'PQ', 1920, 1080, 20),
      rung('hevc', 'PQ', 1280, 720, 10),
      rung('hevc', 'PQ', 960, 540, 10),
      rung('hevc', 'PQ', 640, 360, 10),
      rung('h264', 'SDR', 1920, 1080, 20),
      rung('h264', 'SDR', 960, 540, 10),
    ];
    expect(response.body.items).toEqual([
      expect.objectContaining({ output_width: 1920, output_height: 1080, estimated_credits: 80, rungs }),
    ]);
    expect(response.body.estimated_credits).toBe(80);
    const file = (await estimate({})).body;
    expect(file.estimated_credits).toBe(20);

    // Two items: each its own rungs (a 720p source keeps the rungs at or below it), the total their sum.
    const two = await estimate({ package: 'hls', transfer: 'hlg' }, [...described(), ...described(1280, 720)]);
    expect(two.status).toBe(200);
    const second = two.body.items[1] as { estimated_credits: number; rungs: { video_range: string; height: number }[] };
    expect(second.rungs.map((r) => `${r.video_range} ${r.height}`)).toEqual([
      'HLG 720',
      'HLG 540',
      'HLG 360',
      'SDR 720',
      'SDR 360',
    ]);
    expect(second.estimated_credits).toBe(50);
    expect(two.body.estimated_credits).toBe(80 + 50);
  });

  it('asked rungs and AV1: every asked line at or below the source, in each HDR codec, plus the SDR rungs', async () => {
    const response = await estimate({
      package: 'hls',
      ladder: [{ height: 360 }, { height: 2160 }, { height: 720 }],
      codecs: ['av1', 'hevc'],
    });
    expect(response.status).toBe(200);
    const [item] = response.body.items as { estimated_credits: number; rungs: { codec: string; height: number }[] }[];
    expect(item.rungs.map((r) => `${r.codec} ${r.height}`)).toEqual([
      'hevc 720',
      'hevc 360',
      'av1 720',
      'av1 360',
      'h264 1080',
      'h264 540',
    ]);
    expect(item.estimated_credits).toBe(10 * (1 + 1 + 1 + 1 + 2 + 1));
  });

  it("a package's processing time is its rungs' work: more than its top rung's file, and more again with AV1", async () => {
    type Answer = { estimated_seconds: number; items: { estimated_seconds: number }[] };
    const seconds = async (output: object) => {
      const response = await estimate(output);
      expect(response.status).toBe(200);
      const body = response.body as Answer;
      // One item on the region's one worker: the job's time is the item's.
      expect(body.estimated_seconds).toBe(body.items[0].estimated_seconds);
      return body.estimated_seconds;
    };
    const file1080 = await seconds({});
    const file720 = await seconds({ resolution: '720p' });
    const hevc = await seconds({ package: 'hls' });
    const av1 = await seconds({ package: 'hls', codecs: ['hevc', 'av1'] });
    // HDR 1080/720/540/360 in HEVC, at the file's own encode speed each, plus two SDR rungs: at least the two
    // top HEVC rungs as files (each file counts a second of overhead the package pays once).
    expect(hevc).toBeGreaterThanOrEqual(file1080 + file720 - 1);
    // AV1 rungs of the same sizes cost more than the HEVC ones (docs/api-guide.md "Processing time").
    expect(av1 - hevc).toBeGreaterThan(hevc - file1080);
    // Quality changes the HEVC rungs' speed, as it changes a file's.
    expect(await seconds({ package: 'hls', quality: 'fast' })).toBeLessThan(hevc);
  });

  it("the plan's largest output applies to the top rung; the default ladder stops at it", async () => {
    const starter = await createAccount(api, { plan: 'starter', credits: 1000 });
    expectError(
      api,
      await estimate({ package: 'hls', ladder: [{ height: 720 }, { height: 1440 }] }, described(), starter),
      'plan_not_supported',
      'output.ladder[1].height',
    );
    // A 2160p source on a 1080p plan: the default ladder starts at 1080 (HDR 2+1+1+1, SDR 2+1, 10 s).
    const four = await estimate({ package: 'hls' }, described(3840, 2160), starter);
    expect(four.status).toBe(200);
    expect(four.body.items[0]).toMatchObject({ output_width: 1920, output_height: 1080, estimated_credits: 80 });
    // 11520×720 is over a 1080p plan's pixels at its own size: the input is named.
    expectError(
      api,
      await estimate({ package: 'hls' }, described(11520, 720), starter),
      'plan_not_supported',
      'inputs[0]',
    );
  });

  it('a submit with hls stores the resolved spec and holds the estimate; package file stores and holds what it always did', async () => {
    const uploadId = await upload(api, account.apiKey, clip1080);
    const inputs = [{ upload_id: uploadId }];
    const asked = await estimate({ package: 'hls', codecs: ['hevc', 'av1'] }, inputs);
    expect(asked.status).toBe(200);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs, output: { package: 'hls', codecs: ['hevc', 'av1'] } },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body.billing.estimated_credits).toBe(asked.body.estimated_credits);
    expect(submitted.body.items[0].estimated_credits).toBe(asked.body.items[0].estimated_credits);
    // 2 s: HDR 1080/720/540/360 in HEVC and in AV1 (2+1+1+1 each), SDR 1080 and 540 (2+1).
    expect(asked.body.estimated_credits).toBe(2 * (5 + 5 + 3));

    const [row] = await db.query('SELECT output_spec, output_options, estimated_credits FROM jobs WHERE id = $1', [
      submitted.body.job_id,
    ]);
    expect(row.output_spec).toEqual({
      api: 'sdr2hdr',
      container: 'mp4',
      targetLines: null,
      mapping: 'reference',
      transfer: 'pq',
      peakNits: 1000,
      quality: 'balanced',
      preset: expect.any(String),
      crf: expect.any(Number),
      package: 'hls',
      ladder: {
        segmentSeconds: 4,
        hdrLines: [2160, 1440, 1080, 720, 540, 360],
        maxHdrRungs: 4,
        hdrCodecs: ['hevc', 'av1'],
        audioKbps: 128,
      },
    });
    expect(row.output_options).toMatchObject({ package: 'hls', ladder: null, codecs: ['hevc', 'av1'] });
    const [hold] = await db.query(
      `SELECT sum(credits)::int AS held FROM credit_ledger WHERE job_id = $1 AND kind = 'authorise'`,
      [submitted.body.job_id],
    );
    expect(hold.held).toBe(asked.body.estimated_credits);

    // An asked ladder is stored as asked (highest first), with no cut; the job view's picture is the top rung's.
    const ladder = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs, output: { package: 'hls', ladder: [{ height: 540 }, { height: 720 }], transfer: 'hlg' } },
    });
    expect(ladder.status).toBe(202);
    expect(ladder.body.items[0]).toMatchObject({ width: 1920, height: 1080, output_width: 1280, output_height: 720 });
    // HLG 720 and 540 (1 + 1), SDR 1080 and 540 (2 + 1), 2 s.
    expect(ladder.body.billing.estimated_credits).toBe(2 * 5);
    const [asks] = await db.query('SELECT output_spec FROM jobs WHERE id = $1', [ladder.body.job_id]);
    expect(asks.output_spec.ladder).toEqual({
      segmentSeconds: 4,
      hdrLines: [720, 540],
      hdrCodecs: ['hevc'],
      audioKbps: 128,
    });

    // A file, named or not: today's spec, options and hold (2 s at 1080p: 4 credits), no `rungs` in its estimate.
    for (const output of [{}, { package: 'file' }]) {
      const fileEstimate = await estimate(output, inputs);
      expect(fileEstimate.body.items[0]).not.toHaveProperty('rungs');
      expect(fileEstimate.body.estimated_credits).toBe(4);
      const file = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body: { inputs, output } });
      expect(file.status).toBe(202);
      expect(file.body.billing.estimated_credits).toBe(4);
      const [stored] = await db.query('SELECT output_spec, output_options FROM jobs WHERE id = $1', [file.body.job_id]);
      expect(stored.output_spec).toMatchObject({ package: 'file', ladder: null });
      expect(Object.keys(stored.output_options).sort()).toEqual(
        ['container', 'mapping', 'peak_nits', 'quality', 'resolution', 'transfer'].sort(),
      );
      await call(api, 'POST', `/v1/sdr2hdr/jobs/${file.body.job_id}/cancel`, { key: account.apiKey });
    }

    // The packages this step cannot run yet are cancelled: their holds released, nothing charged.
    for (const job of [submitted.body.job_id, ladder.body.job_id]) {
      const cancelled = await call(api, 'POST', `/v1/sdr2hdr/jobs/${job}/cancel`, { key: account.apiKey });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.billing).toMatchObject({ charged_credits: 0, state: 'released' });
    }
  });
});
