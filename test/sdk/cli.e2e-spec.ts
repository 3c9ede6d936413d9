// The `mediajobs` command (the SDK's cli.js, built from its sources) run as a child process against
// the real service: output, exit codes per error family, and a real HEVC result on disk.
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptedMp4, sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestApi } from '../support/app';
import { ensureBuilt, runScript } from '../support/dist-build';
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
      // The price first (from the file's headers, before any byte is sent), then the upload's bytes.
      const estimateLine =
        /^estimate: (\d+) credits? \(\$(\d+\.\d\d) at \$[\d.]+\/credit\) for [\d.]+ s of media; about \d+:\d\d of processing$/m;
      expect(converted.stderr).toMatch(estimateLine);
      const size = (await stat(input)).size;
      expect(converted.stderr).toMatch(new RegExp(`^uploading ${escape(input)}: 0 B of [\\d.]+ KiB \\(0%\\)$`, 'm'));
      expect(converted.stderr).toMatch(
        new RegExp(`^uploading ${escape(input)}: [\\d.]+ KiB of [\\d.]+ KiB \\(100%\\)$`, 'm'),
      );
      expect(converted.stderr.indexOf('estimate:')).toBeLessThan(converted.stderr.indexOf('uploading'));
      expect(size).toBeGreaterThan(0);
      const estimated = Number(estimateLine.exec(converted.stderr)![1]);
      const inWords = (count: number | string) => `${count} credit${Number(count) === 1 ? '' : 's'}`;
      expect(converted.stderr).toMatch(new RegExp(`^submitted job_\\w+ \\(estimated ${inWords(estimated)}\\)$`, 'm'));
      // Counts read as words: "1 credit", never "1 credits".
      expect(converted.stderr).not.toMatch(/\b1 credits\b/);
      expect(converted.stderr).toMatch(/^downloading out\.mp4: [\d.]+ (KiB|MiB) of [\d.]+ (KiB|MiB) \(100%\)$/m);
      // Not a terminal, so one progress line per status change or 10 % step, ending at 100 %.
      expect(converted.stderr).toMatch(/^succeeded +\[#{30}\] 100% ETA --:--$/m);
      const saved = /^saved out\.mp4 \(job (job_\w+), succeeded, charged (\d+) credits?\) in \d+:\d\d$/m.exec(
        converted.stdout,
      );
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

      // An existing output is never overwritten without --force (refused before anything is sent).
      const again = await run(account.apiKey, ['convert', input, '--to', 'out.mp4'], cwd);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/^usage_error: out\.mp4 exists; pass --force to overwrite it$/m);
      expect(again.stderr).not.toMatch(/^(estimate:|uploading)/m);

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

  it('a short balance: the estimate, insufficient_credits with its numbers, exit 4 — before uploading anything', async () => {
    const account = await createAccount(api, { credits: 1 });
    const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-broke-'));
    const input = await sdrMp4({ width: 640, height: 360, seconds: 2 }); // 2 credits
    const result = await run(account.apiKey, ['convert', input, '--to', 'out.mp4'], cwd);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^estimate: \d+ credits? /m);
    expect(result.stderr).toMatch(errorLine('insufficient_credits'));
    const required = /^ {2}required_credits: (\d+)$/m.exec(result.stderr);
    expect(Number(required?.[1])).toBe(2);
    expect(result.stderr).toMatch(/^ {2}available_credits: 1$/m);
    expect(result.stderr).toMatch(/^nothing was uploaded or submitted$/m);
    expect(result.stderr).not.toMatch(/^uploading/m);
    expect(existsSync(join(cwd, 'out.mp4'))).toBe(false);
    // The service saw no upload and no job from this account.
    const [{ uploads, jobs }] = await api.app
      .get(DataSource)
      .query(
        'SELECT (SELECT count(*)::int FROM uploads WHERE account_id = $1) AS uploads, (SELECT count(*)::int FROM jobs WHERE account_id = $1) AS jobs',
        [account.accountId],
      );
    expect({ uploads, jobs }).toEqual({ uploads: 0, jobs: 0 });
  });

  it(
    'README quick start: create-account --credits, set the key, convert — with no MEDIAJOBS_BASE_URL (the default)',
    async () => {
      // 1. An operator creates an account with credits (npm run admin -- create-account …).
      const admin = await runScript(ensureBuilt('dist/src/admin-cli.js'), [
        'create-account',
        '--name',
        'Quick start',
        '--plan',
        'pro',
        '--credits',
        '1000',
      ]);
      expect(admin.code).toBe(0);
      const created = JSON.parse(admin.stdout);
      expect(created.account).toMatchObject({ plan: 'pro' });
      const key = created.api_key.key as string;
      expect((await call(api, 'GET', '/v1/account/credits', { key })).body.balance_credits).toBe(1000);
      // 2–3. The key in the environment, then convert (the README's base URL is the CLI's default,
      // http://127.0.0.1:3000; this test's API listens on a port of its own).
      const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-quick-'));
      const input = await sdrMp4({ width: 640, height: 360, seconds: 2 });
      const converted = await runCli(
        cli,
        ['convert', input, '--to', 'out.mp4'],
        { MEDIAJOBS_API_KEY: key, MEDIAJOBS_BASE_URL: api.url },
        cwd,
      );
      expect(converted.code).toBe(0);
      expect(existsSync(join(cwd, 'out.mp4'))).toBe(true);
    },
    JOB_TIMEOUT,
  );

  it('keys list|create|revoke, ledger, webhooks list|deliveries print the API’s JSON', async () => {
    const account = await createAccount(api, { credits: 40 });
    const created = await run(account.apiKey, ['keys', 'create', '--scopes', 'sdr2hdr,audio']);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ object: 'api_key', scopes: ['sdr2hdr', 'audio'], key: expect.stringMatching(/^mjk_/) });
    expect(created.stderr).toMatch(/shown once/);

    const listed = JSON.parse((await run(account.apiKey, ['keys', 'list'])).stdout);
    expect(listed.data.map((entry: { id: string }) => entry.id)).toEqual([key.id, account.keyId]);
    expect(JSON.stringify(listed)).not.toContain(key.key);
    const all = JSON.parse((await run(account.apiKey, ['keys', 'list', '--limit', '1', '--all'])).stdout);
    expect(all.map((entry: { id: string }) => entry.id)).toEqual([key.id, account.keyId]);

    const revoked = await run(account.apiKey, ['keys', 'revoke', key.id]);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
    expect((await run(key.key, ['credits'])).stderr).toMatch(errorLine('revoked_api_key'));
    expect((await run(account.apiKey, ['keys', 'create'])).code).toBe(2);

    const ledger = JSON.parse((await run(account.apiKey, ['ledger'])).stdout);
    expect(ledger).toMatchObject({ object: 'list', data: [{ kind: 'grant', credits: 40 }] });

    const endpoint = await call(api, 'POST', '/v1/webhook-endpoints', {
      key: account.apiKey,
      body: { url: 'http://127.0.0.1:9/mediajobs' },
    });
    expect(endpoint.status).toBe(201);
    const hooks = JSON.parse((await run(account.apiKey, ['webhooks', 'list'])).stdout);
    expect(hooks.data).toEqual([
      expect.objectContaining({ id: endpoint.body.id, url: 'http://127.0.0.1:9/mediajobs' }),
    ]);
    expect(JSON.stringify(hooks)).not.toContain(endpoint.body.secret);
    const deliveries = await run(account.apiKey, ['webhooks', 'deliveries', endpoint.body.id]);
    expect(deliveries.code).toBe(0);
    expect(JSON.parse(deliveries.stdout)).toMatchObject({ object: 'list', data: [] });
    expect((await run(account.apiKey, ['webhooks', 'deliveries', 'we_unknown0000000000'])).stderr).toMatch(
      errorLine('resource_missing'),
    );
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
