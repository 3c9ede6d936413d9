// Whether dist/ is older than the sources it is built from: one rule for `npm run test:one`
// (scripts/test-one.js) and the tests that run the built service (test/support/dist-build.ts).
'use strict';

const { existsSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');

/** The newest modification time of a non-spec .ts file under `dir`. */
function newestSourceMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(file));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
      newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/** True when `builtFile` is missing or older than a source under `root`'s src/ or migrations/. */
function isStale(root, builtFile) {
  const sources = Math.max(newestSourceMtime(path.join(root, 'src')), newestSourceMtime(path.join(root, 'migrations')));
  return !existsSync(builtFile) || statSync(builtFile).mtimeMs < sources;
}

module.exports = { isStale };
