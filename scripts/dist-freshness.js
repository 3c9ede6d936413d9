// Whether a build is older than the sources it is built from: one rule for `npm run test:one`
// (scripts/test-one.js) and the tests that run the built service (test/support/dist-build.ts).
'use strict';

const { existsSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');

/** The newest modification time of a file under `dir` (or of `dir` itself, a file) that `accept`s. */
function newestMtime(dir, accept = () => true) {
  if (!existsSync(dir)) return 0;
  if (!statSync(dir).isDirectory()) return statSync(dir).mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(file, accept));
    else if (accept(entry.name)) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

const isServerSource = (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts');

/** True when `builtFile` is missing or older than a source under `root`'s src/ or migrations/. */
function isStale(root, builtFile) {
  const sources = Math.max(
    newestMtime(path.join(root, 'src'), isServerSource),
    newestMtime(path.join(root, 'migrations'), isServerSource),
  );
  return !existsSync(builtFile) || statSync(builtFile).mtimeMs < sources;
}

/** What the dashboard's build (`npm run build -w dashboard`) reads: its sources, page, and build settings. */
const DASHBOARD_SOURCES = ['src', 'index.html', 'vite.config.ts', 'tsconfig.json', 'package.json'];

/** True when dashboard/dist was never built or a dashboard source changed since (the API serves dist/). */
function isDashboardStale(root) {
  const built = path.join(root, 'dashboard/dist/index.html');
  if (!existsSync(built)) return true;
  const sources = Math.max(...DASHBOARD_SOURCES.map((name) => newestMtime(path.join(root, 'dashboard', name))));
  return statSync(built).mtimeMs < sources;
}

module.exports = { isStale, isDashboardStale };
