// What each test file costs: the CPU seconds of a process tree count the work of the children it started,
// and `node scripts/test-times.js` prints the costliest files of .jest-cpu.jsonl with their shares.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS module, also loaded by Jest's environment
const { treeCpuSeconds } = require('../support/process-cpu.js') as { treeCpuSeconds: (pid?: number) => number };

describe('test CPU accounting', () => {
  it('counts the CPU of a child process the test ran, not only its own', () => {
    const before = treeCpuSeconds();
    const ownBefore = process.cpuUsage();
    // A child that spins until it has used 0.6 s of CPU (not of wall time: the machine may be loaded).
    execFileSync(process.execPath, ['-e', 'while (process.cpuUsage().user < 600_000);']);
    const own = process.cpuUsage(ownBefore);
    const tree = treeCpuSeconds() - before;
    expect(tree).toBeGreaterThanOrEqual(0.5);
    expect(tree).toBeGreaterThan((own.user + own.system) / 1e6 + 0.4);
  });

  it('prints the costliest files first with their share of the CPU and wall totals, the newest record of each', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mj-test-times-'));
    try {
      const file = join(dir, 'cpu.jsonl');
      const lines = [
        { file: 'test/a.e2e-spec.ts', cpu: 90, wall: 30, run: 1 },
        { file: 'test/b.e2e-spec.ts', cpu: 10, wall: 60, run: 1 },
        { file: 'test/c.e2e-spec.ts', cpu: 5, wall: 5, run: 1 },
        { file: 'test/c.e2e-spec.ts', cpu: 50, wall: 10, run: 2 },
      ];
      writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"cut short`);
      const out = spawnSync(process.execPath, [join(ROOT, 'scripts/test-times.js'), file], { encoding: 'utf8' });
      expect(out.status).toBe(0);
      const rows = out.stdout.split('\n').filter((line) => line.includes('e2e-spec'));
      expect(rows.map((row) => row.trim().split(/\s+/))).toEqual([
        ['90.0', '60.0%', '30.0', '30.0%', 'test/a.e2e-spec.ts'],
        ['50.0', '33.3%', '10.0', '10.0%', 'test/c.e2e-spec.ts'],
        ['10.0', '6.7%', '60.0', '60.0%', 'test/b.e2e-spec.ts'],
      ]);
      expect(out.stdout).toContain('3 files: CPU 150.0 s');

      const run1 = spawnSync(process.execPath, [join(ROOT, 'scripts/test-times.js'), file, '--run=1', '--top=1'], {
        encoding: 'utf8',
      });
      expect(run1.stdout).toContain('3 files: CPU 105.0 s');
      expect(run1.stdout.split('\n').filter((line) => line.includes('e2e-spec'))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
