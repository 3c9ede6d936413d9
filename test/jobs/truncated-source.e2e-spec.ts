// A source that decodes fewer seconds than its container declares (issue 26, truncated source): the
// job view says what was decoded beside what was declared, warns about a small shortfall, and an item
// whose source ends more than a second early fails invalid_media, charged 0 (docs/api-decisions.md §4).
// Real API, worker, PostgreSQL, Redis and ffmpeg; the files are real MP4s cut short.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { call, createAccount, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';

const exec = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';

describe('a source shorter than its container declares', () => {
  let dir: string;
  let whole: Buffer;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-truncated-'));
    // 10 s with the index first (+faststart), so a file cut short still declares 10 s and decodes until its data ends.
    const path = join(dir, 'whole.mp4');
    await exec(FFMPEG, [
      ...['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'],
      ...['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=30:duration=10'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=10'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'],
      ...['-movflags', '+faststart', path],
    ]);
    whole = await readFile(path);
    stack = await startStack({ REGION: 'truncated', STORAGE_DIR: dir });
    api = stack.api;
  });
  afterAll(() => stack?.close());

  async function submitCut(fraction: number) {
    const path = join(dir, `cut-${fraction}.mp4`);
    await writeFile(path, whole.subarray(0, Math.floor(whole.length * fraction)));
    const account = await createAccount(api, { plan: 'pro', credits: 100 });
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, path) }] },
    });
    expect(submitted.status).toBe(202);
    // The container declares 10 s: that is what is priced and held.
    expect(submitted.body.items[0]).toMatchObject({
      duration_seconds: 10,
      decoded_duration_seconds: null,
      warnings: [],
    });
    expect(submitted.body.billing.estimated_credits).toBe(10);
    const done = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    return { account, done };
  }

  it('cut in half (decodes ~5 of 10 s): failed invalid_media, both lengths named, charged 0', async () => {
    const { account, done } = await submitCut(0.5);
    expect(done.status).toBe('failed');
    expect(done.billing).toMatchObject({ charged_credits: 0, refunded: true });
    const [item] = done.items;
    expect(item.error).toMatchObject({ code: 'invalid_media' });
    expect(item.error.message).toMatch(/decodes to [45]\.\d s of the 10\.0 s/);
    expect(item.output).toBeNull();
    expect(await credits(api, account.apiKey)).toMatchObject({ balance_credits: 100, reserved_credits: 0 });
  });

  it('missing its last ~0.6 s: succeeds, says what was decoded, warns, and charges for what was made', async () => {
    const { done } = await submitCut(0.95);
    expect(done.status).toBe('succeeded');
    const [item] = done.items;
    expect(item.duration_seconds).toBe(10);
    expect(item.decoded_duration_seconds).toBeGreaterThan(9);
    expect(item.decoded_duration_seconds).toBeLessThan(9.9);
    expect(item.warnings).toEqual([
      {
        code: 'source_shorter_than_declared',
        message: expect.stringMatching(/^The source decoded to 9\.\d s of the 10\.0 s its container declares/),
      },
    ]);
    expect(done.billing.charged_credits).toBe(Math.ceil(item.decoded_duration_seconds));
  });

  it('a whole source: decoded as declared, no warning', async () => {
    const { done } = await submitCut(1);
    expect(done.status).toBe('succeeded');
    expect(done.items[0].decoded_duration_seconds).toBeCloseTo(10, 1);
    expect(done.items[0].warnings).toEqual([]);
    expect(done.billing.charged_credits).toBe(10);
  });
});
