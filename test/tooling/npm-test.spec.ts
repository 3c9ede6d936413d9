// `npm test` on a machine set up from the README: its first step checks every system tool the suites
// run and stops within seconds with the missing list and the install lines; its main step runs the SDK's
// suite whatever Jest's outcome and fails if either failed.
import { spawn, spawnSync } from 'node:child_process';
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
import { pollUntil } from '../support/processes';

const ROOT = resolve(__dirname, '../..');
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by .ci/run
const { TOOLS } = require('../../scripts/preflight.js') as {
  TOOLS: { name: string; commands?: string[]; debian: string; brew: string | null }[];
};
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, npm's pretest
const { CHECKS } = require('../../scripts/checks.js') as { CHECKS: [string, string][] };
const dashboardPackageJson = JSON.parse(readFileSync(join(ROOT, 'dashboard/package.json'), 'utf8')) as {
  scripts: Record<string, string>;
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
    expect(packageJson.scripts.pretest).toBe(`${preflight} && node scripts/checks.js`);
    // scripts/checks.js runs the three at once; the dashboard's type-check is the start of its build.
    const commands = CHECKS.map(([, command]) => command);
    expect(commands).toEqual(['tsc -p tsconfig.json --noEmit', 'npm run lint', 'npm run build']);
    expect(packageJson.scripts.typecheck).toBe(`${commands[0]} && tsc -p dashboard/tsconfig.json --noEmit`);
    expect(packageJson.scripts.build).toContain('npm run build -w dashboard');
    expect(dashboardPackageJson.scripts.build).toMatch(/^tsc -p tsconfig.json --noEmit && /);
  });

  it('fails the checks when one of them fails, after every one has ended', () => {
    // A copy of scripts/checks.js whose build fails at once and whose type-check takes a moment.
    mkdirSync(join(work, 'scripts'));
    const source = readFileSync(join(ROOT, 'scripts/checks.js'), 'utf8');
    const checks = source.replace(
      /const CHECKS = \[[\s\S]*?\n\];/,
      "const CHECKS = [['type-check', 'sleep 1 && echo typed'], ['lint', 'echo linted'], ['build', 'echo broken >&2; exit 3']];",
    );
    expect(checks).not.toBe(source);
    writeFileSync(join(work, 'scripts/checks.js'), checks);
    const result = spawnSync(process.execPath, [join(work, 'scripts/checks.js')], { cwd: work, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/> build: echo broken >&2; exit 3 \(failed, exit 3, [\d.]+ s\)\nbroken/);
    expect(result.stdout).toMatch(/> lint: echo linted \(ok, [\d.]+ s\)\nlinted/);
    expect(result.stdout).toMatch(/> type-check: sleep 1 && echo typed \(ok, [\d.]+ s\)\ntyped/);
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
  function runWith(jestExit: number, sdkExit: number, jestLeavesBehind = '', env: Record<string, string> = {}) {
    mkdirSync(join(work, 'scripts'));
    copyFileSync(join(ROOT, 'scripts/test.js'), join(work, 'scripts/test.js'));
    // At its end it removes what the run left (scripts/leftovers.js), through the real PostgreSQL.
    copyFileSync(join(ROOT, 'scripts/leftovers.js'), join(work, 'scripts/leftovers.js'));
    mkdirSync(join(work, 'node_modules'));
    symlinkSync(join(ROOT, 'node_modules/pg'), join(work, 'node_modules/pg'), 'dir');
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
        `${jestLeavesBehind};process.exit(${jestExit});`,
    );
    stub(join(work, 'bin/npm'), 'npm', sdkExit);
    const result = spawnSync(process.execPath, [join(work, 'scripts/test.js')], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, TEST_WORKERS: '', ...env, PATH: `${join(work, 'bin')}${delimiter}${process.env.PATH}` },
    });
    return { status: result.status, stdout: result.stdout, calls: readFileSync(calls, 'utf8').trim().split('\n') };
  }

  it("runs the SDK's suite after a failing Jest and fails", () => {
    const { status, stdout, calls } = runWith(1, 0);
    expect(calls).toEqual([
      'jest --maxWorkers=2 --workerIdleMemoryLimit=1.5GB --json --outputFile=.jest-results.json (node --max-old-space-size=8192)',
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

  it('runs the files in one process with TEST_WORKERS=1', () => {
    const { status, calls } = runWith(0, 0, '', { TEST_WORKERS: '1' });
    expect(status).toBe(0);
    expect(calls[0]).toBe('jest --runInBand --json --outputFile=.jest-results.json (node --max-old-space-size=8192)');
  });

  it('runs the files in TEST_WORKERS workers, each replaced once it holds 1.5 GB', () => {
    const { status, calls } = runWith(0, 0, '', { TEST_WORKERS: '4' });
    expect(status).toBe(0);
    expect(calls[0]).toBe(
      'jest --maxWorkers=4 --workerIdleMemoryLimit=1.5GB --json --outputFile=.jest-results.json (node --max-old-space-size=8192)',
    );
  });

  it('ends what a test file left running, and only that', async () => {
    // A Jest whose test file started a worker in a process group of its own and never killed it.
    const pidFile = join(work, 'leftover.pid');
    const other = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    try {
      const { status, stdout } = runWith(
        0,
        0,
        "const c = require('node:child_process').spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });" +
          `c.unref(); require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid))`,
      );
      expect(status).toBe(0);
      expect(stdout).toContain('npm test: ended 1 leftover processes');
      const leftover = Number(readFileSync(pidFile, 'utf8'));
      await pollUntil('the leftover to be gone', async () => !isRunning(leftover) || undefined, 5000, 50);
      // A process of no test run (no TEST_RUN_PID of this one in its environment) is left alone.
      expect(isRunning(other.pid!)).toBe(true);
    } finally {
      other.kill('SIGKILL');
    }
  });
});

describe('Jest run directly (npx jest, npm run test:e2e)', () => {
  /** jest.config.js's maxWorkers as a fresh process with `TEST_WORKERS` set to `workers` reads it. */
  const maxWorkers = (workers: string) =>
    spawnSync(process.execPath, ['-p', `require(${JSON.stringify(join(ROOT, 'jest.config.js'))}).maxWorkers`], {
      encoding: 'utf8',
      env: { ...process.env, TEST_WORKERS: workers },
    }).stdout.trim();

  it('runs two workers by default, as npm test does, and one process with TEST_WORKERS=1', () => {
    expect(maxWorkers('')).toBe('2');
    expect(maxWorkers('1')).toBe('1');
    expect(maxWorkers('3')).toBe('3');
  });
});

/** Alive and not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
