// `npx mediajobs` works right after `npm ci` in the repository: npm ci runs the sdk workspace's
// `prepare` (its build, which marks dist/cli.js executable) and links the workspace's bin into
// node_modules/.bin. Checked on a private copy of sdk/, so a running build of sdk/dist is not disturbed.
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './support';

describe('the CLI after npm ci', () => {
  it('the sdk workspace’s prepare builds an executable dist/cli.js that runs as `mediajobs`', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'mj-sdk-install-'));
    try {
      for (const name of ['package.json', 'tsconfig.json', 'src'])
        cpSync(join(ROOT, 'sdk', name), join(copy, name), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
      const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as {
        bin: Record<string, string>;
        scripts: Record<string, string>;
      };
      expect(manifest.bin).toEqual({ mediajobs: 'dist/cli.js' });
      expect(manifest.scripts.prepare).toBe('npm run build');

      // What npm ci runs for the workspace once its dependencies are in place.
      const prepared = spawnSync('npm', ['run', 'prepare', '--silent'], { cwd: copy, encoding: 'utf8' });
      expect(prepared.status).toBe(0);
      const cli = join(copy, 'dist/cli.js');
      expect(statSync(cli).mode & 0o111).toBe(0o111);
      // Run as a program (its shebang), as node_modules/.bin/mediajobs runs it.
      const { stdout } = await promisify(execFile)(cli, ['--help']);
      expect(stdout).toMatch(/^mediajobs \d+\.\d+\.\d+/);
      expect(stdout).toContain('mediajobs keys list');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 120_000);

  it('the root workspace links the bin: node_modules/.bin/mediajobs → the sdk workspace’s dist/cli.js', () => {
    expect(readlinkSync(join(ROOT, 'node_modules/mediajobs'))).toBe('../sdk');
    expect(readlinkSync(join(ROOT, 'node_modules/.bin/mediajobs'))).toBe('../mediajobs/dist/cli.js');
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
    expect(root.workspaces).toContain('sdk');
  });
});
