// `mediajobs convert clip.mp4 --package hls --to out/` (the SDK's cli.js, built from its sources) against
// the real API: it submits output.package "hls", waits, and saves the whole package — master, every media
// playlist, every segment — into the folder by following the playlists through the playback link, so
// out/master.m3u8 plays from disk; a package whose playlist points outside refuses to write there. The job
// is ended with a real package as the ladder worker will (test/support/hls-package.ts) while the CLI waits.
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { packagePrefix, STORAGE, type Storage } from '../../src/common/storage/storage';
import { sdrMp4 } from '../fixtures/media';
import { createAccount, startApi, type TestAccount, type TestApi } from '../support/app';
import { markRegionHealthy } from '../support/chaos-accounts';
import { finishWithPackage, localPackage } from '../support/hls-package';
import { startStack } from '../support/worker';
import { buildSdk, runCli, type CliRun } from './support';

const REGION = 'cli-package';
const exec = promisify(execFile);

describe('mediajobs convert --package hls against the real API', () => {
  let sdkDir: string;
  let api: TestApi;

  beforeAll(async () => {
    sdkDir = buildSdk();
    // The CLI fetches a package's files one after another from one address: above the per-IP limit of key-less routes.
    api = await startApi({ REGION, IP_RATE_LIMIT: '1000' });
    await markRegionHealthy(api, REGION);
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  /** The account's job as soon as it is submitted, with the output spec it was submitted with. */
  async function submittedJob(account: TestAccount, deadline = Date.now() + 60_000) {
    const db = api.app.get(DataSource);
    for (;;) {
      const [job] = await db.query(`SELECT id, output_options FROM jobs WHERE account_id = $1`, [account.accountId]);
      if (job) return job as { id: string; output_options: Record<string, unknown> };
      if (Date.now() > deadline) throw new Error('the CLI submitted no job');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Runs convert while playing the worker: the submitted job ends with the test package (`tamper` may change it). */
  async function convert(
    account: TestAccount,
    args: string[],
    cwd: string,
    tamper?: (prefix: string) => Promise<void>,
  ): Promise<CliRun> {
    const run = runCli(
      join(sdkDir, 'cli.js'),
      ['convert', await sdrMp4({ seconds: 3 }), ...args],
      { MEDIAJOBS_API_KEY: account.apiKey, MEDIAJOBS_BASE_URL: api.url },
      cwd,
    );
    const job = await submittedJob(account);
    expect(job.output_options).toMatchObject({ package: 'hls' });
    await finishWithPackage(api, job.id);
    await tamper?.(packagePrefix(account.accountId, job.id, 0));
    return run;
  }

  it('saves the master, every playlist and every segment into the folder, byte for byte', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-package-'));
    const result = await convert(account, ['--package', 'hls', '--to', 'out'], cwd);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^saved out \(job job_\w+, succeeded, charged \d+ credits?\) in \d+:\d\d$/m);

    const pkg = await localPackage();
    const saved: string[] = [];
    for (const entry of await readdir(join(cwd, 'out'), { withFileTypes: true })) {
      if (entry.isFile()) saved.push(entry.name);
      else for (const name of await readdir(join(cwd, 'out', entry.name))) saved.push(`${entry.name}/${name}`);
    }
    expect(saved.sort()).toEqual([...pkg.files].sort());
    for (const file of pkg.files) {
      const same = (await readFile(join(cwd, 'out', file))).equals(await readFile(join(pkg.dir, file)));
      expect({ file, same }).toEqual({ file, same: true });
    }
    expect(result.stderr).toMatch(new RegExp(`^${pkg.files.length} files of the package, `, 'm'));

    // A folder that is not empty is refused before anything is sent, unless --force.
    const again = await runCli(
      join(sdkDir, 'cli.js'),
      ['convert', await sdrMp4({ seconds: 3 }), '--package', 'hls', '--to', 'out'],
      { MEDIAJOBS_API_KEY: account.apiKey, MEDIAJOBS_BASE_URL: api.url },
      cwd,
    );
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/out is not empty; pass --force to write into it/);
  }, 180_000);

  it('refuses to write outside the folder when a playlist points there', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-escape-'));
    await mkdir(join(cwd, 'inside'));
    const result = await convert(account, ['--package', 'hls', '--to', 'inside/out'], cwd, async (prefix) => {
      const storage = api.app.get<Storage>(STORAGE);
      const master = '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\n../../../escaped.m3u8\n';
      await storage.write(`${prefix}master.m3u8`, Readable.from([Buffer.from(master)]), 1000);
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/refusing a URI outside the package: "\.\.\/\.\.\/\.\.\/escaped\.m3u8"/);
    expect(existsSync(join(cwd, 'escaped.m3u8'))).toBe(false);
    expect(existsSync(join(cwd, 'inside', 'escaped.m3u8'))).toBe(false);
    expect(await readdir(join(cwd, 'inside', 'out'))).toEqual([]);
  }, 180_000);

  it('refuses --resolution with --package hls before sending anything', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-usage-'));
    const result = await runCli(
      join(sdkDir, 'cli.js'),
      ['convert', await sdrMp4({ seconds: 3 }), '--package', 'hls', '--resolution', '720p', '--to', 'out'],
      { MEDIAJOBS_API_KEY: account.apiKey, MEDIAJOBS_BASE_URL: api.url },
      cwd,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/--resolution applies to a file, not to --package hls/);
    expect(existsSync(join(cwd, 'out'))).toBe(false);
  });
});

// The same command with a package the real worker makes (its own API and worker: a worker beside the
// test-ended jobs above would take them too); ffprobe opens the saved master from disk.
describe('mediajobs convert --package hls with a real worker', () => {
  let sdkDir: string;
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    sdkDir = buildSdk();
    stack = await startStack({ REGION: 'cli-package-worker', IP_RATE_LIMIT: '1000' });
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  it('saves the worker-made package, and ffprobe opens out/master.m3u8 with every rung', async () => {
    const api = stack.api;
    const account = await createAccount(api, { credits: 1000 });
    const cwd = await mkdtemp(join(tmpdir(), 'mj-cli-worker-'));
    const result = await runCli(
      join(sdkDir, 'cli.js'),
      ['convert', await sdrMp4({ width: 640, height: 360, seconds: 3 }), '--package', 'hls', '--to', 'out'],
      { MEDIAJOBS_API_KEY: account.apiKey, MEDIAJOBS_BASE_URL: api.url },
      cwd,
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^saved out \(job job_\w+, succeeded, charged \d+ credits?\) in \d+:\d\d$/m);

    const probed = await exec('ffprobe', [
      ...['-v', 'error', '-protocol_whitelist', 'file', '-show_entries', 'stream=codec_name,height,color_transfer'],
      ...['-of', 'json', join(cwd, 'out', 'master.m3u8')],
    ]);
    const streams = JSON.parse(probed.stdout).streams as { codec_name: string; height?: number }[];
    expect(streams.map((stream) => `${stream.codec_name} ${stream.height ?? ''}`.trim()).sort()).toEqual(
      ['aac', 'h264 360', 'hevc 360'].sort(),
    );
    // Every file the master leads to was saved: each rung's playlist, init segment and segments.
    for (const folder of ['audio', 'h264-360-sdr', 'hevc-360-pq']) {
      const names = await readdir(join(cwd, 'out', folder));
      expect(names).toEqual(expect.arrayContaining(['init.mp4', 'playlist.m3u8', 'seg-00000.m4s']));
    }
  }, 300_000);
});
