// `npm run dev`'s last step: runs `concurrently` with the given arguments (the API and a worker). When
// this terminal is a TTY, the processes log readable lines (LOG_FORMAT=pretty, in colour) although their
// own stdout is concurrently's pipe; otherwise (CI, a file) they keep JSON. LOG_FORMAT set by hand wins.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const env = { ...process.env };
if (!env.LOG_FORMAT && process.stdout.isTTY) {
  env.LOG_FORMAT = 'pretty';
  env.FORCE_COLOR ??= '1';
}
const bin = path.resolve(__dirname, '..', 'node_modules', '.bin', 'concurrently');
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
