// `npm run dev`'s last step: runs `concurrently` with the given arguments (the API and a worker). The
// processes log readable lines (LOG_FORMAT=pretty) although their own stdout is concurrently's pipe, and
// also when `npm run dev` itself is piped or written to a file: it is a person's tool. In colour only on
// a terminal. LOG_FORMAT set by hand wins (LOG_FORMAT=json for a collector).
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const env = { ...process.env };
env.LOG_FORMAT ||= 'pretty';
if (process.stdout.isTTY) env.FORCE_COLOR ??= '1';
const bin = path.resolve(__dirname, '..', 'node_modules', '.bin', 'concurrently');
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
