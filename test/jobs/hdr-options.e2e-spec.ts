// output.mapping and output.transfer on sdr2hdr through the real API and a worker: bad values are refused
// with their `param` before anything is held or stored, and a job's view says what was made — HDR10 or HLG,
// the transfer a decoder reads, and where the light went (measured MaxCLL/MaxFALL for PQ, null for HLG).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { readHdrMetadata } from '../../src/media/hdr-metadata';
import { lightPatternMp4 } from '../fixtures/media';
import { call, createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startWorker, type TestWorker } from '../support/worker';
import { writeFile } from 'node:fs/promises';

describe('sdr2hdr output.mapping and output.transfer', () => {
  let api: TestApi;
  let worker: TestWorker;
  let db: DataSource;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-hdr-options-'));
    const env = { STORAGE_DIR: dir };
    worker = await startWorker(env);
    api = await startApi(env);
    db = api.app.get(DataSource);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await worker?.close();
  });

  async function footprint(account: TestAccount) {
    const [row] = await db.query(
      `SELECT (SELECT count(*)::int FROM jobs WHERE account_id = $1) AS jobs,
              (SELECT reserved_credits::int FROM accounts WHERE id = $1) AS reserved`,
      [account.accountId],
    );
    return row as { jobs: number; reserved: number };
  }

  it.each([
    ['an unknown mapping', { mapping: 'brighter' }, 'output.mapping', /mapping/],
    ['an unknown transfer', { transfer: 'dolby-vision' }, 'output.transfer', /transfer/],
    ['a peak with HLG', { transfer: 'hlg', peak_nits: 1000 }, 'output.peak_nits', /HLG is relative to the display/],
  ] as const)(
    '%s: 400 invalid_parameter with its param, for submit and estimate; nothing held or stored',
    async (_label, output, param, message) => {
      const account = await createAccount(api, { credits: 1000 });
      const uploadId = await upload(api, account.apiKey, await lightPatternMp4());
      for (const path of ['/v1/sdr2hdr/jobs', '/v1/sdr2hdr/jobs/estimate']) {
        const response = await call(api, 'POST', path, {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }], output },
        });
        expect(response.status).toBe(400);
        expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param, type: 'invalid_request_error' });
        expect(response.body.error.message).toMatch(message);
      }
      expect(await footprint(account)).toEqual({ jobs: 0, reserved: 0 });
    },
  );

  it('prices expand and HLG as reference HDR10 (same work per second of output)', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await lightPatternMp4());
    const price = async (output: object) =>
      (
        await call(api, 'POST', '/v1/sdr2hdr/jobs/estimate', {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }], output },
        })
      ).body.estimated_credits;
    const reference = await price({});
    expect(reference).toBeGreaterThan(0);
    expect(await price({ mapping: 'expand', peak_nits: 4000 })).toBe(reference);
    expect(await price({ mapping: 'expand', transfer: 'hlg' })).toBe(reference);
  });

  it('the job view says HDR10 with measured light for PQ expand, HLG with nulls for HLG', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await lightPatternMp4());
    const submit = async (output: object) => {
      const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key: account.apiKey,
        body: { inputs: [{ upload_id: uploadId }], output },
      });
      expect(response.status).toBe(202);
      return response.body.job_id as string;
    };
    const pq = await submit({ mapping: 'expand', peak_nits: 1000 });
    const hlg = await submit({ mapping: 'expand', transfer: 'hlg' });
    const pqJob = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${pq}`, undefined, 180_000);
    const hlgJob = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${hlg}`, undefined, 180_000);
    expect(pqJob.status).toBe('succeeded');
    expect(hlgJob.status).toBe('succeeded');

    const video = pqJob.items[0].output.video;
    expect(video).toMatchObject({ hdr: 'HDR10', transfer: 'smpte2084', primaries: 'bt2020' });
    expect(video.light).toMatchObject({ mapping: 'expand', mastering_peak_nits: 1000 });
    expect(video.light.max_cll).toBeGreaterThanOrEqual(800);
    expect(video.light.max_fall).toBeLessThan(video.light.max_cll);
    // The view's numbers are the file's own.
    const file = join(dir, `${pq}.mp4`);
    await writeFile(file, Buffer.from(await (await fetch(pqJob.items[0].output.url)).arrayBuffer()));
    expect(await readHdrMetadata(file)).toEqual({
      levels: { maxCll: video.light.max_cll, maxFall: video.light.max_fall },
      peakNits: 1000,
    });

    expect(hlgJob.items[0].output.video).toMatchObject({
      hdr: 'HLG',
      transfer: 'arib-std-b67',
      light: { mapping: 'expand', mastering_peak_nits: null, max_cll: null, max_fall: null },
    });
  }, 240_000);
});
