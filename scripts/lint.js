// `npm run lint`: ESLint over the TypeScript, then Prettier's check, each remembering what it already
// found clean in .cache/ (gitignored), so a second run over unchanged files takes seconds, not minutes.
//
// Prettier's verdict on a file depends on that file (and Prettier's version and settings) alone: its cache
// (--cache-strategy content) is kept as it is. ESLint's is not that simple: our type-aware rules
// (no-floating-promises, no-misused-promises, switch-exhaustiveness-check) read the types of the files a
// file imports, and ESLint's cache re-lints only the files that changed themselves — an `async` added to a
// function in src/ would leave a now-floating call in another file unreported (typescript-eslint issue
// 4694). So ESLint's cache file is named after a hash of everything another file's lint can depend on: every
// linted source except the spec files (nothing imports a spec), the TypeScript and ESLint settings and the
// lockfile. A changed spec is re-linted alone; any other change starts a fresh cache, a full lint.
'use strict';

const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } = require('node:fs');
const path = require('node:path');

/** What Prettier checks (and, of it, ESLint lints the TypeScript not ignored in eslint.config.mjs). */
const PRETTIER_PATHS = [
  'src',
  'test',
  'migrations',
  'bench',
  'dashboard/src',
  'dashboard/vite.config.ts',
  'sdk/src',
  'sdk/test',
];
/** Settings whose change can change any file's lint. */
const SETTINGS = [
  'eslint.config.mjs',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.bench.json',
  'dashboard/tsconfig.json',
  'sdk/tsconfig.json',
  'sdk/tsconfig.test.json',
  'package-lock.json',
];
const isSpec = (name) => /\.(e2e-)?spec\.tsx?$/.test(name);
const isSource = (name) => /\.(ts|tsx|mts|cts|d\.ts)$/.test(name);

/** Every linted TypeScript file under `dir` (a folder or one file). */
function sourcesUnder(dir, found = []) {
  if (!existsSync(dir)) return found;
  if (!statSync(dir).isDirectory()) return isSource(dir) ? [...found, dir] : found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) sourcesUnder(file, found);
    else if (isSource(entry.name)) found.push(file);
  }
  return found;
}

/** The hash of every input another file's lint can depend on (see the top of this file). */
function dependencyKey(root) {
  const hash = createHash('sha256');
  const files = [
    ...PRETTIER_PATHS.flatMap((p) => sourcesUnder(path.join(root, p))).filter((f) => !isSpec(f)),
    ...SETTINGS.map((f) => path.join(root, f)).filter((f) => existsSync(f)),
  ].sort();
  for (const file of files) hash.update(path.relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

function lint(root) {
  const run = (command, args) => {
    const result = spawnSync(path.join(root, 'node_modules/.bin', command), args, { cwd: root, stdio: 'inherit' });
    if (result.error) console.error(`${command}: ${result.error.message}`);
    return result.status ?? 1;
  };
  const cacheDir = path.join(root, '.cache');
  mkdirSync(path.join(cacheDir, 'eslint'), { recursive: true });
  const key = dependencyKey(root);
  const eslintCache = path.join(cacheDir, 'eslint', `${key}.json`);
  // Older keys' caches are of no further use; keep the folder small.
  for (const name of readdirSync(path.join(cacheDir, 'eslint')))
    if (name !== `${key}.json`) rmSync(path.join(cacheDir, 'eslint', name), { force: true });

  const eslint = run('eslint', ['--cache', '--cache-strategy', 'content', '--cache-location', eslintCache, '.']);
  const prettier = run('prettier', [
    '--check',
    '--cache',
    '--cache-strategy',
    'content',
    '--cache-location',
    path.join(cacheDir, 'prettier.json'),
    ...PRETTIER_PATHS,
  ]);
  return eslint !== 0 || prettier !== 0 ? 1 : 0;
}

if (require.main === module) process.exitCode = lint(path.resolve(__dirname, '..'));

module.exports = { dependencyKey };
