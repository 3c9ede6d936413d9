// `output.quality` (fast | balanced | best) from the outside: the submit validates it, the job says
// which one it ran, and the worker's encode ran x265 with the matching preset and CRF — read from the argv of
// the ffmpeg it really ran (a recording wrapper named in FFMPEG_PATH): the file carries no x265 settings
// string since issue 40 (`info=0`: it disagreed with the light levels written after the encode). The
// fidelity floors per preset are test/media/sdr2hdr-quality.spec.ts.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, createAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { forgetCalls, optionValue, recordedCalls, recordingTool } from '../support/recording-tool';
import { startStack } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';

const REGION = 'quality';

describe('output.quality', () => {
  let api: TestApi;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let tools: string;

  beforeAll(async () => {
    tools = await mkdtemp(join(tmpdir(), 'mj-quality-tools-'));
    stack = await startStack({
      REGION,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-quality-store-')),
      FFMPEG_PATH: await recordingTool(tools, 'ffmpeg', process.env.FFMPEG_PATH || 'ffmpeg'),
    });
    api = stack.api;
  });
  afterAll(() => stack.close());

  it('refuses an unknown quality with param output.quality, and no job is created', async () => {
    const account = await createAccount(api, { credits: 100 });
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: 'upl_0123456789abcdef' }], output: { quality: 'ultra' } },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'output.quality' });
    const list = await call(api, 'GET', '/v1/sdr2hdr/jobs', { key: account.apiKey });
    expect(list.body.data).toEqual([]);
  });

  it.each([
    // src/media/quality-presets.ts: fast = ultrafast CRF 12, balanced = veryfast CRF 12, best = medium CRF 10.
    ['fast', { preset: 'ultrafast', crf: '12' }],
    [undefined, { preset: 'veryfast', crf: '12' }],
    ['best', { preset: 'medium', crf: '10' }],
  ] as const)(
    'quality %s: the job reports it and the worker encoded with its x265 preset and CRF',
    async (quality, settings) => {
      const account = await createAccount(api, { credits: 100 });
      const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 1 }));
      // One job at a time in this file: every call recorded from here on is this job's.
      await forgetCalls(tools);
      const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }], ...(quality ? { output: { quality } } : {}) },
      });
      expect(submitted.status).toBe(202);
      const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`);
      expect(job.status).toBe('succeeded');
      const output = job.items[0].output;
      expect(output.video).toMatchObject({ codec: 'hevc', hdr: 'HDR10', quality: quality ?? 'balanced' });
      // The price does not depend on the quality: one credit per started second, as for every sdr2hdr job.
      expect(job.billing).toMatchObject({ estimated_credits: 1, charged_credits: 1 });
      // This job's encode: its one libx265 call (one pass; the same call also writes the round trip's raw frames).
      const encodes = (await recordedCalls(tools)).filter((c) => c.tool === 'ffmpeg' && c.argv.includes('libx265'));
      expect(
        encodes.map((c) => ({ preset: optionValue(c.argv, '-preset'), crf: optionValue(c.argv, '-crf') })),
      ).toEqual([settings]);
    },
  );
});
