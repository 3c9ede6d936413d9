// Never upscaling, said out loud: asking for 2160p from a smaller source produces (and prices) the
// source's own size, and the estimate, the job view and the API reference all say what will be
// produced — items[i].output_width / output_height — before a credit is held.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4, speechWav } from '../fixtures/media';
import { call, createAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';

describe('the output resolution a job will produce', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;

  beforeAll(async () => {
    stack = await startStack({ REGION: 'resolution', STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-resolution-')) });
    api = stack.api;
  });
  afterAll(() => stack?.close());

  const estimate = (key: string, body: object, path = '/v1/sdr2hdr/jobs/estimate') =>
    call(api, 'POST', path, { key, body });
  const declared = (width: number, height: number) => ({ media: { duration_seconds: 10, width, height } });

  it('the estimate gives each item the picture it will produce: 2160p from 1080p stays 1920×1080 at the 1080p price', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    const answer = await estimate(account.apiKey, {
      inputs: [declared(1920, 1080), declared(3840, 2160), declared(640, 360)],
      output: { resolution: '2160p' },
    });
    expect(answer.status).toBe(200);
    const items = answer.body.items.map((item: Record<string, unknown>) => ({
      source: `${item.width}×${item.height}`,
      output: `${item.output_width}×${item.output_height}`,
      credits: item.estimated_credits,
    }));
    expect(items).toEqual([
      // Not upscaled, and priced for what it produces: 10 s × 2 credits (up to 1080p).
      { source: '1920×1080', output: '1920×1080', credits: 20 },
      { source: '3840×2160', output: '3840×2160', credits: 80 },
      { source: '640×360', output: '640×360', credits: 10 },
    ]);
  });

  it('a smaller tier scales the short side down, keeping the aspect (landscape and portrait)', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    const answer = await estimate(account.apiKey, {
      inputs: [declared(1920, 1080), declared(1080, 1920), declared(1280, 720)],
      output: { resolution: '720p' },
    });
    expect(answer.body.items.map((item: Record<string, number>) => [item.output_width, item.output_height])).toEqual([
      [1280, 720],
      [720, 1280],
      [1280, 720],
    ]);
  });

  it('audio items produce no picture: output_width and output_height are null', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    const answer = await estimate(
      account.apiKey,
      { inputs: [{ media: { duration_seconds: 30 } }] },
      '/v1/audio/jobs/estimate',
    );
    expect(answer.status).toBe(200);
    expect(answer.body.items[0]).toMatchObject({ output_width: null, output_height: null });
    const job = await call(api, 'POST', '/v1/audio/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, await speechWav(), 'audio/wav') }] },
    });
    expect(job.body.items[0]).toMatchObject({ output_width: null, output_height: null });
    await waitForJob(api, account.apiKey, `/v1/audio/jobs/${job.body.job_id}`);
  });

  it('the job view says it at submit, and the finished output has exactly that size', async () => {
    const account = await createAccount(api, { plan: 'pro', credits: 10_000 });
    const clip = await sdrMp4({ width: 320, height: 180, seconds: 1 });
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, clip) }], output: { resolution: '2160p' } },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body.items[0]).toMatchObject({ width: 320, height: 180, output_width: 320, output_height: 180 });
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
    expect(job.status).toBe('succeeded');
    expect(job.items[0]).toMatchObject({ output_width: 320, output_height: 180 });
    expect(job.items[0].output.video).toMatchObject({ width: 320, height: 180 });
  });

  it('the API reference says so: output.resolution never upscales, and both item schemas carry output_width/height', async () => {
    const document = (await (await fetch(`${api.url}/docs/openapi.json`)).json()) as any;
    const schemas = document.components.schemas;
    expect(schemas.Sdr2HdrOutputDto.properties.resolution.description).toMatch(/never upscal/i);
    for (const name of ['JobItemResponse', 'JobEstimateItemResponse']) {
      for (const field of ['output_width', 'output_height']) {
        expect({ name, field, schema: schemas[name].properties[field] }).toMatchObject({
          name,
          field,
          schema: { type: ['integer', 'null'], description: expect.stringMatching(/never upscal/i) },
        });
        expect(schemas[name].required).toContain(field);
      }
    }
  });
});
