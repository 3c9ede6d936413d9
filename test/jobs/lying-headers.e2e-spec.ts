// A source whose container headers lie about its length (issue 29 item 1): its mvhd, tkhd and mdhd
// claim 1 s while its samples (and edit lists) last 30 s. ffmpeg decodes every sample, so the service
// must price, limit and bill the length it will encode — not the header's. Real API, worker,
// PostgreSQL, Redis and ffmpeg; the files are made by ffmpeg and patched at the box level.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { keyframedSdrMp4, sdrMp4, speechWav } from '../fixtures/media';
import { call, createAccount, type TestApi } from '../support/app';
import { credits, upload, waitForJob } from '../support/jobs';
import { lieAboutDuration, lieAboutWavLength } from '../support/lying-headers';
import { startStack } from '../support/worker';

const exec = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';

async function ffmpeg(args: string[]): Promise<void> {
  await exec(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args]);
}

/** What ffprobe believes from the headers: the format duration. */
async function headerSeconds(path: string): Promise<number> {
  const { stdout } = await exec(FFPROBE, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path]);
  return Number(stdout.trim());
}

/** What a decoder makes of it: ffmpeg's out_time after decoding the whole file. */
async function decodedSeconds(path: string): Promise<number> {
  const { stdout } = await exec(FFMPEG, [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-i',
    path,
    '-f',
    'null',
    '-',
    '-progress',
    'pipe:1',
  ]);
  const times = [...stdout.matchAll(/out_time_us=(\d+)/g)].map((match) => Number(match[1]) / 1e6);
  return Math.max(...times);
}

describe('a source whose headers lie about its length is priced, limited and billed by what is encoded', () => {
  let dir: string;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-lying-'));
    stack = await startStack({
      REGION: 'lying',
      STORAGE_DIR: dir,
      MAX_DURATION_SECONDS: '40',
      // The 30 s keyframed clip splits into segments; the others run in one pass.
      SEGMENT_SECONDS: '10',
    });
    api = stack.api;
  });
  afterAll(() => stack?.close());

  /** A stream copy of `source` named `name`, and the same with headers that say 1 s; checks the lie took. */
  async function liar(source: string, name: string): Promise<{ honest: string; lying: string }> {
    const honest = join(dir, `honest-${name}`);
    await ffmpeg(['-i', source, '-map', '0', '-c', 'copy', honest]);
    const lying = join(dir, `lying-${name}`);
    await lieAboutDuration(honest, lying, 1);
    expect(await headerSeconds(lying)).toBeCloseTo(1, 1);
    expect(await decodedSeconds(lying)).toBeGreaterThan(27);
    return { honest, lying };
  }

  /** The honest copy's estimate, then a submit of the lying one, by the same account. */
  async function submitBoth(files: { honest: string; lying: string }, contentType: string, kind: 'sdr2hdr' | 'audio') {
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const honestId = await upload(api, account.apiKey, files.honest, contentType);
    const estimate = await call(api, 'POST', `/v1/${kind}/jobs/estimate`, {
      key: account.apiKey,
      body: { inputs: [{ upload_id: honestId }] },
    });
    expect(estimate.status).toBe(200);
    const lyingId = await upload(api, account.apiKey, files.lying, contentType);
    const submitted = await call(api, 'POST', `/v1/${kind}/jobs`, {
      key: account.apiKey,
      body: { inputs: [{ upload_id: lyingId }] },
    });
    return { account, honestCredits: estimate.body.estimated_credits as number, submitted };
  }

  // Lengths clear of a credit boundary: a lying file is priced to the end of its last packet, which for
  // AAC runs a few ms past the honest header (docs/api-decisions.md §4), so at exactly 30 s it would
  // pay one started second more than its honest copy — never less.
  const video = { width: 160, height: 90, seconds: 29.5, fps: 10 };
  it.each([
    ['MP4', 'mp4', 'video/mp4'],
    ['MOV', 'mov', 'video/quicktime'],
  ])('%s: estimated, held and charged as its honest copy (30 credits, not 1)', async (_label, ext, contentType) => {
    const files = await liar(await sdrMp4(video), `clip.${ext}`);
    const { account, honestCredits, submitted } = await submitBoth(files, contentType, 'sdr2hdr');
    // 160×90 is the lowest tier: a credit per started second.
    expect(honestCredits).toBe(30);
    expect(submitted.status).toBe(202);
    expect(submitted.body.billing.estimated_credits).toBe(30);
    expect(submitted.body.items[0].duration_seconds).toBeGreaterThan(29);
    const done = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    expect(done.status).toBe('succeeded');
    expect(done.billing.charged_credits).toBe(30);
    expect((await credits(api, account.apiKey)).balance_credits).toBe(1000 - 30);
  });

  it('segmented: a lying source long enough to be split is priced and billed for every segment', async () => {
    const files = await liar(await keyframedSdrMp4(video), 'gop.mp4');
    const { account, honestCredits, submitted } = await submitBoth(files, 'video/mp4', 'sdr2hdr');
    expect(submitted.status).toBe(202);
    expect(submitted.body.billing.estimated_credits).toBe(honestCredits);
    expect(honestCredits).toBe(30);
    const done = await waitForJob(api, account.apiKey, submitted.headers.get('location')!, undefined, 180_000);
    expect(done.status).toBe('succeeded');
    expect(done.billing.charged_credits).toBe(30);
  });

  it('M4A (audio API): 28 s of speech claiming 1 s is priced at 3 credits, not 1', async () => {
    const m4a = join(dir, 'speech28.m4a');
    await ffmpeg(['-stream_loop', '-1', '-i', await speechWav(), '-t', '28', '-c:a', 'aac', m4a]);
    const files = await liar(m4a, 'speech.m4a');
    const { account, honestCredits, submitted } = await submitBoth(files, 'audio/mp4', 'audio');
    expect(honestCredits).toBe(3);
    expect(submitted.status).toBe(202);
    expect(submitted.body.billing.estimated_credits).toBe(3);
    const done = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    expect(done.status).toBe('succeeded');
    expect(done.billing.charged_credits).toBe(3);
  });

  it('WAV: ffmpeg stops where the data chunk says, so 28 s of samples declared as 5 s are priced, made and billed as 5 s', async () => {
    const wav = join(dir, 'speech28.wav');
    await ffmpeg(['-stream_loop', '-1', '-i', await speechWav(), '-t', '28', '-c:a', 'pcm_s16le', wav]);
    const lying = join(dir, 'lying-speech.wav');
    await lieAboutWavLength(wav, lying, 5);
    // What the service will encode is what the header says: nothing past it is decoded.
    expect(await decodedSeconds(lying)).toBeCloseTo(5, 1);
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const submitted = await call(api, 'POST', '/v1/audio/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, lying, 'audio/wav') }] },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body.items[0].duration_seconds).toBeCloseTo(5, 1);
    const done = await waitForJob(api, account.apiKey, submitted.headers.get('location')!);
    expect(done.status).toBe('succeeded');
    expect(done.billing.charged_credits).toBe(1);
  });

  it('past MAX_DURATION_SECONDS (here 40 s): 50 s claiming 1 s is duration_exceeded at submit, nothing held', async () => {
    const files = await liar(await sdrMp4({ ...video, seconds: 50 }), 'long.mp4');
    const account = await createAccount(api, { plan: 'pro', credits: 1000 });
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: await upload(api, account.apiKey, files.lying, 'video/mp4') }] },
    });
    expect(submitted.status).toBe(400);
    expect(submitted.body.error).toMatchObject({ code: 'duration_exceeded' });
    expect(Number(/lasts (\d+) s/.exec(submitted.body.error.message)?.[1])).toBeGreaterThanOrEqual(50);
    expect((await credits(api, account.apiKey)).balance_credits).toBe(1000);
  });
});
