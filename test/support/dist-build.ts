// The compiled service in dist/, for tests that run it as an operator would (CLI, `node dist/src/main.js`).
import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script, also run by scripts/test-one.js
const { isStale } = require('../../scripts/dist-freshness.js') as {
  isStale: (root: string, builtFile: string) => boolean;
};

/**
 * `npm test` builds dist/ first (pretest); when jest is run directly, rebuild it here if any source
 * is newer than `entry`, so the test never runs stale code. Type errors do not stop tsc from emitting
 * and are `npm run typecheck`'s to report (jest does not type-check either); a build that emitted
 * nothing is an error.
 */
export function ensureBuilt(entry: string): string {
  const file = join(ROOT, entry);
  if (!isStale(ROOT, file)) return file;
  const build = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (isStale(ROOT, file)) {
    throw new Error(`building dist/ did not produce ${entry}:\n${build.stdout}${build.stderr}`);
  }
  return file;
}

export interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built script (e.g. the operator CLI) with the test environment; killed after 30 s. */
export function runScript(script: string, args: string[]): Promise<ScriptResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env: { ...process.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}
