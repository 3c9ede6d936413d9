// `npm run test:one -- <file>` runs one file against current code: it rebuilds dist/ when a server source
// changed since, and the dashboard's build (which the API serves and the browser tests drive) when a
// dashboard source did — not only when it was never built.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

describe('npm run test:one', () => {
  let work: string;
  let calls: string;

  /** A file of the copied tree, written `minutesAgo` minutes ago. */
  function file(relative: string, minutesAgo: number): void {
    const path = join(work, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '');
    const when = new Date(Date.now() - minutesAgo * 60_000);
    utimesSync(path, when, when);
  }

  /** A command of the copied tree that logs its call and exits 0. */
  function stub(relative: string, name: string): void {
    const path = join(work, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `#!/bin/sh\necho "${name} $*" >> "${calls}"\n`);
    chmodSync(path, 0o755);
  }

  beforeEach(() => {
    // scripts/test-one.js in a copy of the repository's shape whose tsc, npm and jest log their calls.
    work = mkdtempSync(join(tmpdir(), 'mj-test-one-'));
    calls = join(work, 'calls.log');
    writeFileSync(calls, '');
    mkdirSync(join(work, 'scripts'));
    for (const script of ['test-one.js', 'dist-freshness.js', 'leftovers.js'])
      copyFileSync(join(ROOT, 'scripts', script), join(work, 'scripts', script));
    mkdirSync(join(work, 'node_modules'));
    symlinkSync(join(ROOT, 'node_modules/pg'), join(work, 'node_modules/pg'), 'dir');
    stub('node_modules/.bin/tsc', 'tsc');
    stub('bin/npm', 'npm');
    const jest = join(work, 'node_modules/jest/bin/jest.js');
    mkdirSync(dirname(jest), { recursive: true });
    writeFileSync(
      jest,
      `require('node:fs').appendFileSync(${JSON.stringify(calls)}, 'jest ' + process.argv.slice(2).join(' ') + '\\n');`,
    );
    // Server sources older than their build.
    file('src/worker.ts', 60);
    file('migrations/1-init.ts', 60);
    file('dist/src/worker.js', 30);
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  function testOne(): string[] {
    const result = spawnSync(process.execPath, [join(work, 'scripts/test-one.js'), 'test/a.e2e-spec.ts'], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(work, 'bin')}${delimiter}${process.env.PATH}` },
    });
    expect(result.status).toBe(0);
    return readFileSync(calls, 'utf8').trim().split('\n');
  }

  it('runs Jest alone when both builds are newer than their sources', () => {
    file('dashboard/src/app.tsx', 60);
    file('dashboard/index.html', 60);
    file('dashboard/dist/index.html', 30);
    expect(testOne()).toEqual(['jest --runInBand test/a.e2e-spec.ts']);
  });

  it('rebuilds the dashboard when one of its sources changed after its build', () => {
    file('dashboard/src/pages/jobs.tsx', 10);
    file('dashboard/dist/index.html', 30);
    expect(testOne()).toEqual(['npm run build -w dashboard', 'jest --runInBand test/a.e2e-spec.ts']);
  });

  it('rebuilds the dashboard when its build settings changed after its build', () => {
    file('dashboard/src/app.tsx', 60);
    file('dashboard/dist/index.html', 30);
    file('dashboard/vite.config.ts', 10);
    expect(testOne()).toEqual(['npm run build -w dashboard', 'jest --runInBand test/a.e2e-spec.ts']);
  });

  it('builds the dashboard that was never built, and dist/ when a server source is newer', () => {
    file('dashboard/src/app.tsx', 60);
    file('src/jobs/cancel.ts', 10);
    expect(testOne()).toEqual([
      'tsc -p tsconfig.build.json',
      'npm run build -w dashboard',
      'jest --runInBand test/a.e2e-spec.ts',
    ]);
  });
});
