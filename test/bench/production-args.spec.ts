import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { productionNodeArgs } from '../../bench/lib/production-args';

const { scripts } = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

describe('the node flags an entry point runs with (what the benchmarks start)', () => {
  it('are the flags of its npm script', () => {
    expect(productionNodeArgs({ 'start:x': 'node --a --b=1 dist/x.js', other: 'node dist/y.js' }, 'dist/x.js')).toEqual(
      ['--a', '--b=1'],
    );
    expect(productionNodeArgs({ 'start:x': 'node dist/x.js' }, 'dist/x.js')).toEqual([]);
    expect(productionNodeArgs({ build: 'tsc -p x' }, 'dist/x.js')).toEqual([]);
  });

  // On the 2-core machines we run, V8's concurrent and parallel GC threads cost the API more CPU than
  // they save while it streams an upload (README "Performance"): `npm run start:api` turns them off.
  it('npm run start:api runs the API with single-threaded GC, a flag this node accepts', () => {
    const flags = productionNodeArgs(scripts, 'dist/src/main.js');
    expect(flags).toEqual(['--single-threaded-gc']);
    expect(execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write("ok")']).toString()).toBe('ok');
  });
});
