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

const jest = path.join(root, 'node_modules', '.bin', 'jest');
const jestStatus = run(jest, ['--runInBand', '--json', '--outputFile=.jest-results.json', ...process.argv.slice(2)]);
const sdkStatus = run('npm', ['test', '-w', 'sdk']);

console.log(`npm test: jest exited ${jestStatus}, sdk exited ${sdkStatus}`);
process.exitCode = jestStatus !== 0 || sdkStatus !== 0 ? 1 : 0;
