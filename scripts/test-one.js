// `npm run test:one -- <file or folder>…`: the inner loop. Jest on the given files in one process, with
// the services they need (the run's own database and Redis prefix, made by Jest's global set-up) but
// without `npm test`'s preflight, type-check, lint, build and SDK suite. dist/ — which tests that spawn
// workers or the CLI run — is rebuilt first, only when a source under src/ or migrations/ is newer
// (tsc over the old output, no clean), and the dashboard only when it was never built or a source of it
// is newer than its build (the API serves dashboard/dist; the browser tests drive it). Anything after
// `--` goes to Jest (e.g. `-t 'a test name'`). Ends whatever the run left running.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { isDashboardStale, isStale } = require('./dist-freshness.js');
const { dropLeftoverDatabases, killLeftoverProcesses } = require('./leftovers.js');

const root = path.resolve(__dirname, '..');
process.env.TEST_RUN_PID = String(process.pid);

const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.error) console.error(`${command}: ${result.error.message}`);
  return result.status ?? 1;
};

const args = process.argv.slice(2);
if (args.length === 0) {
  console.error('usage: npm run test:one -- <test file or folder>… [jest options]');
  process.exit(2);
}

if (isStale(root, path.join(root, 'dist/src/worker.js'))) {
  console.log('test:one: src/ changed since the last build: building dist/ (tsc -p tsconfig.build.json)');
  // Type errors do not stop tsc from emitting; `npm run typecheck` reports them.
  run(path.join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json']);
}
if (isDashboardStale(root)) {
  console.log('test:one: dashboard/ changed since its last build (or was never built): npm run build -w dashboard');
  run('npm', ['run', 'build', '-w', 'dashboard']);
}

const status = run(process.execPath, [path.join(root, 'node_modules/jest/bin/jest.js'), '--runInBand', ...args]);
killLeftoverProcesses(process.pid);
dropLeftoverDatabases(process.pid)
  .catch(() => [])
  .then(() => {
    process.exitCode = status;
  });
