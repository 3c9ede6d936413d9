// `npm test`'s checks before the suites (npm's `pretest`, after the tools preflight): the server's
// type-check, the lint and the build, run at the same time — each is one single-threaded compiler or
// linter, so on two cores together they take about as long as the slowest instead of the sum. Each one's
// output is printed whole when it ends, with its time; any failure fails the step, after all have ended.
// The dashboard's type-check is the first step of its build (dashboard/package.json), so it runs once.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** Name and command of each check; `npm run typecheck` is the first plus the dashboard's (in the build). */
const CHECKS = [
  ['type-check', 'tsc -p tsconfig.json --noEmit'],
  ['lint', 'npm run lint'],
  ['build', 'npm run build'],
];

function runCheck([name, command]) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, {
      cwd: root,
      shell: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${path.join(root, 'node_modules/.bin')}${path.delimiter}${process.env.PATH}` },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => (output += `${error.message}\n`));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(
        `\n> ${name}: ${command} (${code === 0 ? 'ok' : `failed, exit ${code}`}, ${seconds} s)\n${output}`,
      );
      resolve(code === 0);
    });
  });
}

if (require.main === module) {
  Promise.all(CHECKS.map(runCheck)).then((results) => {
    process.exitCode = results.every(Boolean) ? 0 : 1;
  });
}

module.exports = { CHECKS };
