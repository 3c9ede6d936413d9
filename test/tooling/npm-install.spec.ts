// `npm ci` prints no "install-scripts … not yet covered by allowScripts" warning: every dependency with
// an install script is approved or denied in package.json's allowScripts (docs/development.md says why).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

describe('install scripts', () => {
  it('leaves no installed dependency with an unreviewed install script', () => {
    // The same check npm ci ends with, over the installed tree.
    const result = spawnSync('npm', ['install-scripts', 'ls'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.stdout.trim()).toBe('No packages with unreviewed install scripts.');
    expect(result.status).toBe(0);
  });

  it('lets the native helpers run their scripts and denies the telemetry one', () => {
    const { allowScripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      allowScripts: Record<string, boolean>;
    };
    expect(allowScripts).toEqual({
      '@swc/core': true,
      'msgpackr-extract': true,
      '@scarf/scarf': false,
      '@parcel/watcher': false,
      'onnxruntime-node': false,
    });
    const documented = readFileSync(join(ROOT, 'docs/development.md'), 'utf8');
    for (const name of Object.keys(allowScripts)) expect(documented).toContain(`\`${name}\``);
  });
});
