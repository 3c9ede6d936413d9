// `output.quality` (fast | balanced | best) from the outside: the submit validates it, the job says
// which one it ran, and the file carries the matching x265 settings (mediainfo's "Encoding settings",
// which any customer can read). The fidelity floors per preset are test/media/sdr2hdr-quality.spec.ts.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { call, createAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';

const exec = promisify(execFile);
const REGION = 'quality';

/** x265's settings as mediainfo reports them, e.g. { subme: '0', crf: '12.0', … }. */
async function encoderSettings(file: string): Promise<Record<string, string>> {
  const { stdout } = await exec('mediainfo', ['--Inform=Video;%Encoded_Library_Settings%', file]);
  return Object.fromEntries(
    stdout
      .split('/')
      .map((part) => part.trim().split('='))
      .filter((pair) => pair.length === 2),
  );
}

describe('output.quality', () => {
  let api: TestApi;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'mj-quality-'));
    stack = await startStack({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-quality-store-')) });
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
    // x265 presets as mediainfo shows them: ultrafast (me=0 subme=0), veryfast (subme=1 rd=2), medium (subme=2 rd=3).
    ['fast', { subme: '0', rd: '2', crf: '12.0' }],
    [undefined, { subme: '1', rd: '2', crf: '12.0' }],
    ['best', { subme: '2', rd: '3', crf: '10.0' }],
  ] as const)(
    'quality %s: the job reports it and the file was encoded with its settings',
    async (quality, settings) => {
      const account = await createAccount(api, { credits: 100 });
      const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 1 }));
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
      const file = join(scratch, `${quality ?? 'default'}.mp4`);
      await writeFile(file, Buffer.from(await (await fetch(output.url)).arrayBuffer()));
      expect(await encoderSettings(file)).toMatchObject(settings);
    },
  );
});
