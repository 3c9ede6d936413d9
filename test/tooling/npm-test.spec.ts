// `npm test` on a machine set up from the README: its first step checks every system tool the suites
// run and stops within seconds with the missing list and the install lines; its main step runs the SDK's
// suite whatever Jest's outcome and fails if either failed.
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  copyFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by .ci/run
const { TOOLS } = require('../../scripts/preflight.js') as {
  TOOLS: { name: string; commands?: string[]; debian: string; brew: string | null }[];
};

/** Where a command lives on this machine's PATH (or sbin, where Debian keeps pgbouncer). */
function which(command: string): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(['/usr/sbin', '/usr/local/sbin']);
  for (const dir of dirs) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not in this folder
    }
  }
  throw new Error(`${command} is not installed here`);
}

describe('npm test checks the system tools first', () => {
  const preflight = packageJson.scripts.pretest.split(' && ')[0];
  let work: string;

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'mj-preflight-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('runs the preflight before the type-check, lint and build', () => {
    expect(preflight).toBe('node scripts/preflight.js');
    expect(packageJson.scripts.pretest).toBe(`${preflight} && npm run typecheck && npm run lint && npm run build`);
  });

  it('passes on this machine, set up as the Prerequisites say', () => {
    const result = spawnSync('/bin/sh', ['-c', preflight], { cwd: ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('stops within seconds with the missing tool and its install lines when prometheus is not on PATH', () => {
    // A PATH holding every tool the preflight looks for except Prometheus's, and node itself.
    const bin = join(work, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    for (const tool of TOOLS) {
      if (tool.name === 'prometheus') continue;
      for (const command of tool.commands ?? []) symlinkSync(which(command), join(bin, command));
    }

    const started = Date.now();
    const result = spawnSync('/bin/sh', ['-c', preflight], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PATH: bin },
      timeout: 30_000,
    });
    const seconds = (Date.now() - started) / 1000;

    expect(result.status).toBe(1);
    expect(seconds).toBeLessThan(5);
    expect(result.stderr).toContain('npm test: 1 system tool the tests need is missing:');
    expect(result.stderr).toContain('- prometheus (prometheus, promtool)');
    expect(result.stderr).toContain('Install on Debian or Ubuntu:\n  $(command -v sudo) apt-get install prometheus\n');
    expect(result.stderr).toContain('Install on macOS:\n  brew install prometheus\n');
    expect(result.stderr).not.toMatch(/- (ffmpeg|mediainfo|swift|redis|pgbouncer)/);
  });

  it('names every package of the preflight in the README and lets .ci/run install from the same list', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const aptLine = /apt-get install ([^\n`]+)/.exec(readme)?.[1].split(' ') ?? [];
    expect(TOOLS.map((tool) => tool.debian).filter((pkg) => !aptLine.includes(pkg))).toEqual([]);
    const brewLine = /brew install ([^\n`]+?)(?: &&|\n|`)/.exec(readme)?.[1].split(/\s+/) ?? [];
    const formulae = TOOLS.map((tool) => tool.brew).filter((brew): brew is string => !!brew && !brew.startsWith('--'));
    expect(formulae.filter((formula) => !brewLine.includes(formula))).toEqual([]);
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toContain(
      'node scripts/preflight.js --missing-debian-packages',
    );
  });
});

describe("npm test's main step", () => {
  let work: string;

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'mj-test-runner-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  /** scripts/test.js in a copy of the repository's shape whose jest and npm exit as told and log their calls. */
  function runWith(jestExit: number, sdkExit: number) {
    mkdirSync(join(work, 'scripts'));
    copyFileSync(join(ROOT, 'scripts/test.js'), join(work, 'scripts/test.js'));
    const calls = join(work, 'calls.log');
    const stub = (file: string, name: string, exit: number) => {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> "${calls}"\nexit ${exit}\n`);
      chmodSync(file, 0o755);
    };
    // Jest runs as a script of node's own, with a raised heap limit (scripts/test.js says why).
    const jestBin = join(work, 'node_modules/jest/bin/jest.js');
    mkdirSync(dirname(jestBin), { recursive: true });
    writeFileSync(
      jestBin,
      `require('node:fs').appendFileSync(${JSON.stringify(calls)}, ` +
        "'jest ' + process.argv.slice(2).join(' ') + ' (node ' + process.execArgv.join(' ') + ')\\n');" +
        `process.exit(${jestExit});`,
    );
    stub(join(work, 'bin/npm'), 'npm', sdkExit);
    const result = spawnSync(process.execPath, [join(work, 'scripts/test.js')], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(work, 'bin')}${delimiter}${process.env.PATH}` },
    });
    return { status: result.status, stdout: result.stdout, calls: readFileSync(calls, 'utf8').trim().split('\n') };
  }

  it("runs the SDK's suite after a failing Jest and fails", () => {
    const { status, stdout, calls } = runWith(1, 0);
    expect(calls).toEqual([
      'jest --runInBand --json --outputFile=.jest-results.json (node --max-old-space-size=8192)',
      'npm test -w sdk',
    ]);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('npm test: jest exited 1, sdk exited 0');
    expect(status).toBe(1);
  });

  it("fails when only the SDK's suite fails, and passes when both pass", () => {
    expect(runWith(0, 1).status).toBe(1);
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work);
    const passing = runWith(0, 0);
    expect(passing.stdout).toContain('npm test: jest exited 0, sdk exited 0');
    expect(passing.status).toBe(0);
  });
});
