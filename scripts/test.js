// `npm test`'s main step (after the preflight, type-check, lint and build of `pretest`): the Jest suite,
// then the SDK's own suite whatever Jest's outcome, and a failure if either failed. Extra arguments go
// to Jest. The last line names both exits; .ci/run reads it to count a suite that failed without a
// failed test to show for it.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.error) console.error(`${command}: ${result.error.message}`);
  return result.status ?? 1;
};

// One process runs every suite (--runInBand: the suites share ports, servers and a database), and what
// each suite leaves behind adds up there: the whole run reached V8's default heap limit (~4 GB here) and
// died of it ("JavaScript heap out of memory") after 127 suites. The limit is raised for Jest alone.
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const jestStatus = run(process.execPath, [
  '--max-old-space-size=8192',
  jest,
  '--runInBand',
  '--json',
  '--outputFile=.jest-results.json',
  ...process.argv.slice(2),
]);
const sdkStatus = run('npm', ['test', '-w', 'sdk']);

console.log(`npm test: jest exited ${jestStatus}, sdk exited ${sdkStatus}`);
process.exitCode = jestStatus !== 0 || sdkStatus !== 0 ? 1 : 0;
