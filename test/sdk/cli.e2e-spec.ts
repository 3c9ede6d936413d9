// The `mediajobs` command (the SDK's cli.js, built from its sources) run as a child process against
// the real service: output, exit codes per error family, and a real HEVC result on disk.
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptedMp4, sdrMp4 } from '../fixtures/media';
import { createAccount, type TestApi } from '../support/app';
import { probeVideoStream } from '../support/media-checks';
import { startStack } from '../support/worker';
import { buildSdk, runCli, type CliRun } from './support';

const JOB_TIMEOUT = 120_000;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the mediajobs CLI against the real service', () => {
  let sdkDir: string;
  let cli: string;
  let api: TestApi;
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    sdkDir = buildSdk();
    cli = join(sdkDir, 'cli.js');
    stack = await startStack({ REGION: 'sdk-cli', STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-sdk-cli-')) });
    api = stack.api;
  });
  afterAll(async () => {
    await stack?.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  const run = async (apiKey: string, args: string[], cwd?: string): Promise<CliRun> =>
    runCli(
      cli,
      args,
      { MEDIAJOBS_API_KEY: apiKey, MEDIAJOBS_BASE_URL: api.url },
      cwd ?? (await mkdtemp(join(tmpdir(), 'mj-cli-run-'))),
    );
  /** The one line an error prints: `code: message (doc_url)`. */
  const errorLine = (code: string): RegExp =>
    new RegExp(`^${code}: [^\\n]+ \\(${escape(`${api.config.docsUrl}/errors.html#${code}`)}\\)$`, 'm');

  it(
    'convert <file> --to out.mp4: uploads, shows progress, saves an HEVC HDR10 file; credits and jobs list print JSON',
    async () => {
      const account = await createAccount(api, { credits: 100 });
      const input = await sdrMp4();
      const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-convert-'));

      const converted = await run(account.apiKey, ['convert', input, '--to', 'out.mp4'], cwd);
      expect(converted.stderr).not.toMatch(/error/);
      expect(converted.code).toBe(0);
      expect(converted.stderr).toContain(`uploading ${input}\n`);
      expect(converted.stderr).toMatch(/^submitted job_\w+ \(estimated \d+ credits\)$/m);
      // Not a terminal, so one progress line per status change or 10 % step, ending at 100 %.
      expect(converted.stderr).toMatch(/^succeeded +\[#{30}\] 100% ETA --:--$/m);
      const saved = /^saved out\.mp4 \(job (job_\w+), succeeded, charged (\d+) credits\)$/m.exec(converted.stdout);
      expect(saved).not.toBeNull();
      const [, jobId, charged] = saved!;

      const out = join(cwd, 'out.mp4');
      expect(existsSync(`${out}.part`)).toBe(false);
      expect(await probeVideoStream(out)).toMatchObject({ codec_name: 'hevc', color_transfer: 'smpte2084' });

      const credits = await run(account.apiKey, ['credits']);
      expect(credits.code).toBe(0);
      expect(JSON.parse(credits.stdout)).toMatchObject({
        object: 'credit_balance',
        balance_credits: 100 - Number(charged),
        reserved_credits: 0,
        available_credits: 100 - Number(charged),
      });

      const listed = await run(account.apiKey, ['jobs', 'list', 'sdr2hdr', '--limit', '5']);
      expect(listed.code).toBe(0);
      const list = JSON.parse(listed.stdout);
      expect(list).toMatchObject({ object: 'list', has_more: false });
      expect(list.data.map((job: { job_id: string }) => job.job_id)).toEqual([jobId]);
    },
    JOB_TIMEOUT,
  );

  it('an invalid key prints `code: message (doc_url)` and exits 3 (auth)', async () => {
    const result = await run(`mjk_${'A'.repeat(40)}`, ['credits']);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(errorLine('invalid_api_key'));
  });

  it('an empty balance prints insufficient_credits and exits 4 (billing); nothing is written', async () => {
    const account = await createAccount(api, { credits: 0 });
    const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-broke-'));
    const result = await run(account.apiKey, ['convert', await sdrMp4(), '--to', 'out.mp4'], cwd);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(errorLine('insufficient_credits'));
    expect(existsSync(join(cwd, 'out.mp4'))).toBe(false);
  });

  it(
    'a failed job prints the job error and exits 8 (processing); nothing is written',
    async () => {
      const account = await createAccount(api, { credits: 50 });
      const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-drm-'));
      const result = await run(account.apiKey, ['convert', await encryptedMp4(), '--to', 'out.mp4'], cwd);
      expect(result.code).toBe(8);
      expect(result.stderr).toMatch(/^failed +\[/m);
      expect(result.stderr).toMatch(errorLine('drm_protected'));
      expect(existsSync(join(cwd, 'out.mp4'))).toBe(false);
      expect(existsSync(join(cwd, 'out.mp4.part'))).toBe(false);
    },
    JOB_TIMEOUT,
  );
});
