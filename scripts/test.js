// `npm test`'s main step (after the preflight, type-check, lint and build of `pretest`): the Jest suite,
// then the SDK's own suite whatever Jest's outcome, and a failure if either failed. Extra arguments go
// to Jest. The last line names both exits; .ci/run reads it to count a suite that failed without a
// failed test to show for it.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { dropLeftoverDatabases, killLeftoverProcesses } = require('./leftovers.js');

const root = path.resolve(__dirname, '..');
// Everything this run starts carries its pid (test/support/test-env.ts): its databases are named after it,
// and what is still running at the end is ended here (scripts/leftovers.js).
process.env.TEST_RUN_PID = String(process.pid);

const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.error) console.error(`${command}: ${result.error.message}`);
  return result.status ?? 1;
};

// Two Jest workers by default (the machines we run on have two cores; jest.config.js says why),
// TEST_WORKERS=n for n, each worker with a database and Redis prefix of its own (test/support/test-env.ts,
// docs/development.md); TEST_WORKERS=1 runs every file in Jest's own process (--runInBand).
// What each file leaves behind adds up in a process: one running them all reached V8's default heap
// limit (~4 GB here) and died of it ("JavaScript heap out of memory") after 127 suites. The limit is
// raised for Jest alone, and a worker that holds more than 1.5 GB once a file is done is replaced.
const asked = Number(process.env.TEST_WORKERS);
const workers = Number.isInteger(asked) && asked > 0 ? asked : 2;
const parallel = workers > 1;
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const jestStatus = run(process.execPath, [
  '--max-old-space-size=8192',
  jest,
  ...(parallel ? [`--maxWorkers=${workers}`, '--workerIdleMemoryLimit=1.5GB'] : ['--runInBand']),
  '--json',
  '--outputFile=.jest-results.json',
  ...process.argv.slice(2),
]);
const sdkStatus = run('npm', ['test', '-w', 'sdk']);

// Nothing this run started outlives it: a worker or server a killed test file left running, a database.
const killed = killLeftoverProcesses(process.pid);
dropLeftoverDatabases(process.pid)
  .catch(() => [])
  .then((dropped) => {
    if (killed || dropped.length)
      console.log(`npm test: ended ${killed} leftover processes, dropped ${dropped.length} leftover databases`);
    console.log(`npm test: jest exited ${jestStatus}, sdk exited ${sdkStatus}`);
    process.exitCode = jestStatus !== 0 || sdkStatus !== 0 ? 1 : 0;
  });
