// Pictures are priced and capped by their pixels (issue 36 item 4): an 11520×720 picture is as much work
// as a 3840×2160 one (the same 8.3 million pixels a frame) and must cost the same, and a plan whose
// largest output is 1080p takes up to 1920×1080's pixels — whichever way the picture is stretched. The
// estimate, the submit and the plan check give the same answer; 16:9 pictures keep their prices.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { markRegionHealthy } from '../support/chaos-accounts';
import { expectError } from '../support/error-checks';
import { upload } from '../support/jobs';

const REGION = 'picture-pixels';

describe('pictures are priced and capped by their pixels', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-pixels-')) });
    await markRegionHealthy(api, REGION);
  });
  afterAll(() => api?.close());

  const declared = (width: number, height: number) => ({ media: { duration_seconds: 10, width, height } });
  const estimate = (account: TestAccount, body: unknown) =>
    call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', { key: account.apiKey, body });
  const submit = (account: TestAccount, body: unknown) =>
    call(api, 'POST', '/v1/sdr2hdr/jobs', { key: account.apiKey, body });
  const credits = (answer: { body: { items: { estimated_credits: number }[] } }) =>
    answer.body.items.map((item) => item.estimated_credits);

  it('equal pixels cost the same: 11520×720 and 720×11520 cost what 3840×2160 does; 16:9 prices are unchanged', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    const answer = await estimate(account, {
      inputs: [
        declared(11520, 720),
        declared(720, 11520),
        declared(3840, 2160),
        declared(2560, 1440),
        declared(1920, 1080),
        declared(1280, 720),
        declared(640, 360),
      ],
    });
    expect(answer.status).toBe(200);
    // 10 s each: 8 credits/s up to 3840×2160's pixels, 2 up to 1920×1080's, 1 up to 1280×720's.
    expect(credits(answer)).toEqual([80, 80, 80, 80, 20, 10, 10]);
  });

  it('a wide picture with a short side under 720 lines but more pixels than 1280×720 is priced as 1080p, submit and estimate alike', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    // 2560×400: 1,024,000 pixels, more than 1280×720's 921,600.
    const uploadId = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 2560, height: 400, seconds: 2, fps: 2, audio: false }),
    );
    const body = { inputs: [{ upload_id: uploadId }] };
    const estimated = await estimate(account, body);
    expect(estimated.status).toBe(200);
    expect(estimated.body).toMatchObject({ accepted: true, estimated_credits: 4 });
    const submitted = await submit(account, body);
    expect(submitted.status).toBe(202);
    expect(submitted.body.billing.estimated_credits).toBe(4);
    await call(api, 'POST', `/v1/sdr2hdr/jobs/${submitted.body.job_id}/cancel`, { key: account.apiKey });
  });

  it("a 1080p plan takes up to 1920×1080's pixels in any shape, and refuses 11520×720 with the numbers", async () => {
    const account = await createAccount(api, { plan: 'starter', credits: 10_000 });
    const fits = await estimate(account, { inputs: [declared(1080, 1920), declared(1440, 1440)] });
    expect(fits.status).toBe(200);
    expect(fits.body).toMatchObject({ accepted: true, estimated_credits: 40 });

    const wide = await estimate(account, { inputs: [declared(11520, 720)] });
    expectError(api, wide, 'plan_not_supported', 'inputs[0]');
    expect(wide.body.error.details).toEqual({
      output_width: 11520,
      output_height: 720,
      output_pixels: 11520 * 720,
      max_output_pixels: 1920 * 1080,
    });

    // The same picture, uploaded and submitted: the same refusal, and nothing held.
    const uploadId = await upload(
      api,
      account.apiKey,
      await sdrMp4({ width: 11520, height: 720, seconds: 2, fps: 1, audio: false }),
    );
    const submitted = await submit(account, { inputs: [{ upload_id: uploadId }] });
    expectError(api, submitted, 'plan_not_supported', 'inputs[0]');
    expect(submitted.body.error.details).toEqual(wide.body.error.details);
    const balance = await call(api, 'GET', '/v1/account/credits', { key: account.apiKey });
    expect(balance.body).toMatchObject({ reserved_credits: 0 });
  });

  it('a 2160p source on a 1080p plan asked for at 1080p fits; kept at its own size it is refused, naming the input', async () => {
    const account = await createAccount(api, { plan: 'starter', credits: 10_000 });
    const downscaled = await estimate(account, { inputs: [declared(3840, 2160)], output: { resolution: '1080p' } });
    expect(downscaled.body).toMatchObject({ accepted: true, estimated_credits: 20 });
    // 2048×1080 (DCI) has more pixels than 1920×1080: at 720p (1366×720) it fits the plan.
    const dci = await estimate(account, { inputs: [declared(2048, 1080)], output: { resolution: '1080p' } });
    expectError(api, dci, 'plan_not_supported', 'output.resolution');
    const dciAt720 = await estimate(account, { inputs: [declared(2048, 1080)], output: { resolution: '720p' } });
    expect(dciAt720.body).toMatchObject({ accepted: true, estimated_credits: 20 });
  });
});
