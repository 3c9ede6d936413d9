// Every ffmpeg and ffprobe a real worker process runs, read from its argv (issue 36, item 10): each input
// carries the protocol whitelist (local files only) and the format whitelist (the demuxers we accept) in
// front of it — in ffmpeg these are options of the one input that follows them, so a second input
// without its own is opened by every demuxer ffmpeg has. The worker runs with FFMPEG_PATH and
// FFPROBE_PATH pointing at wrappers that write their argv to a file each and run the real tool; the
// jobs cover the one-pass and the segmented sdr2hdr item (split, audio copy, parts, join, the round
// trip measured against the concat of the parts, the light map) and an audio item.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALLOWED_DEMUXERS } from '../../src/media/ffmpeg-input';
import { keyframedSdrMp4, sdrMp4, speechWav } from '../fixtures/media';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { ensureBuilt } from '../support/dist-build';
import { upload, waitForJob } from '../support/jobs';
import { killAllWorkers, sleep, spawnWorker } from '../support/processes';
import { recordedCalls, recordingTool, type ToolCall } from '../support/recording-tool';

const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';
/** Demuxers an input may be parsed by: those we accept, the concat of our own parts, the raw frames we keep. */
const DEMUXERS = new Set([...ALLOWED_DEMUXERS.split(','), 'concat', 'rawvideo']);

/** What is wrong with one call's inputs (empty: nothing). */
function inputProblems({ tool, argv }: ToolCall): string[] {
  // An input's options are those between the previous input and its `-i` (ffprobe: its one path, last).
  const inputs: { path: string; options: string[] }[] = [];
  if (tool === 'ffprobe') inputs.push({ path: argv[argv.length - 1], options: argv.slice(0, -1) });
  else {
    let from = 0;
    argv.forEach((arg, at) => {
      if (arg !== '-i') return;
      inputs.push({ path: argv[at + 1], options: argv.slice(from, at) });
      from = at + 2;
    });
  }
  const problems: string[] = [];
  if (!inputs.length) problems.push('no input');
  for (const { path, options } of inputs) {
    const value = (name: string) => {
      const at = options.lastIndexOf(name);
      return at < 0 ? undefined : options[at + 1];
    };
    const protocols = value('-protocol_whitelist');
    const formats = value('-format_whitelist');
    if (protocols !== 'file') problems.push(`${path}: -protocol_whitelist ${protocols}`);
    if (!formats || formats.split(',').some((format) => !DEMUXERS.has(format)))
      problems.push(`${path}: -format_whitelist ${formats}`);
  }
  return problems;
}

describe('the inputs of every media tool a worker runs', () => {
  let api: TestApi;
  let dir: string;

  beforeAll(async () => {
    ensureBuilt('dist/src/worker.js');
    dir = await mkdtemp(join(tmpdir(), 'mj-tool-inputs-'));
    api = await startApi({ REGION: 'toolargv', STORAGE_DIR: join(dir, 'storage') });
  }, 120_000);
  afterAll(async () => {
    await killAllWorkers();
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('each input of each ffmpeg and ffprobe call carries the protocol and format whitelists', async () => {
    const worker = spawnWorker({
      REGION: 'toolargv',
      STORAGE_DIR: join(dir, 'storage'),
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
      // The 2 s clip is encoded in two segments of 1 s, the 1 s clip in one pass.
      SEGMENT_SECONDS: '1',
      WORKER_CONCURRENCY: '2',
      FFMPEG_PATH: await recordingTool(dir, 'ffmpeg', FFMPEG),
      FFPROBE_PATH: await recordingTool(dir, 'ffprobe', FFPROBE),
    });
    const account = await createAccount(api, { credits: 1000 });
    const inputs = [
      ['sdr2hdr', await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90, seconds: 1 }))],
      ['sdr2hdr', await upload(api, account.apiKey, await keyframedSdrMp4({ width: 160, height: 90, seconds: 2 }))],
      ['audio', await upload(api, account.apiKey, await speechWav(), 'audio/wav')],
    ] as const;
    const jobs: string[] = [];
    for (const [kind, uploadId] of inputs) {
      // 503 region_unavailable until the spawned worker's first heartbeat.
      for (;;) {
        worker.assertAlive();
        const submitted = await call(api, 'POST', `/v1/${kind}/jobs`, {
          key: account.apiKey,
          body: { inputs: [{ upload_id: uploadId }] },
        });
        if (submitted.status === 202) {
          jobs.push(`/v1/${kind}/jobs/${submitted.body.job_id}`);
          break;
        }
        expect(submitted.status).toBe(503);
        await sleep(100);
      }
    }
    for (const path of jobs) {
      const job = await waitForJob(api, account.apiKey, path, undefined, 180_000);
      expect({ path, status: job.status }).toEqual({ path, status: 'succeeded' });
    }

    const calls = await recordedCalls(dir);
    // The worker ran both tools, and calls of two inputs (the round trip against the source's parts).
    expect(calls.filter((c) => c.tool === 'ffprobe').length).toBeGreaterThan(3);
    expect(
      calls.filter((c) => c.tool === 'ffmpeg' && c.argv.filter((arg) => arg === '-i').length > 1).length,
    ).toBeGreaterThan(1);
    expect(calls.some((c) => c.argv.includes('concat'))).toBe(true);
    const problems = calls.flatMap((c) =>
      inputProblems(c).map((problem) => `${c.tool} ${c.argv.join(' ')}\n  ${problem}`),
    );
    expect(problems).toEqual([]);
  }, 300_000);
});
