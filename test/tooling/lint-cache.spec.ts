// `npm run lint` keeps ESLint's cache only while nothing another file's lint depends on has changed: the
// type-aware rules read imported types, and ESLint re-lints only the files that changed themselves
// (scripts/lint.js). A changed spec file keeps the cache (nothing imports a spec); any other source,
// the settings or the lockfile start a new one.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, `npm run lint`
const { dependencyKey } = require('../../scripts/lint.js') as { dependencyKey: (root: string) => string };

describe("npm run lint's ESLint cache", () => {
  let root: string;
  const write = (relative: string, text: string) => {
    mkdirSync(dirname(join(root, relative)), { recursive: true });
    writeFileSync(join(root, relative), text);
  };
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mj-lint-key-'));
    write('src/jobs/cancel.ts', 'export function cancel(): void {}\n');
    write('test/jobs/cancel.e2e-spec.ts', "it('cancels', () => cancel());\n");
    write('src/jobs/cancel.spec.ts', "it('is a function', () => undefined);\n");
    write('dashboard/src/app.tsx', 'export const App = () => null;\n');
    write('eslint.config.mjs', 'export default [];\n');
    write('package-lock.json', '{}\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is kept when only spec files change', () => {
    const key = dependencyKey(root);
    write('test/jobs/cancel.e2e-spec.ts', "it('cancels twice', () => cancel());\n");
    write('src/jobs/cancel.spec.ts', "it('is still a function', () => undefined);\n");
    expect(dependencyKey(root)).toBe(key);
  });

  it.each([
    ['a source a spec imports', 'src/jobs/cancel.ts', 'export async function cancel(): Promise<void> {}\n'],
    ['a test helper', 'test/support/jobs.ts', 'export const poll = 1;\n'],
    ['a dashboard source', 'dashboard/src/app.tsx', 'export const App = () => 1;\n'],
    ['the ESLint config', 'eslint.config.mjs', 'export default [{}];\n'],
    ['the lockfile', 'package-lock.json', '{ "lockfileVersion": 3 }\n'],
  ])('starts over when %s changes', (_what, file, text) => {
    const key = dependencyKey(root);
    write(file, text);
    expect(dependencyKey(root)).not.toBe(key);
  });
});
