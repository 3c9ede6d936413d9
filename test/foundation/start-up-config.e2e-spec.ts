// A bad configuration stops the built API before it serves anything: one clear line on stderr naming
// the variable and what is allowed, exit code 78 (EX_CONFIG), no stack trace — for every variable.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { ensureBuilt, ROOT } from '../support/dist-build';
import { loopbackHostName } from '../support/loopback-names';

interface Exit {
  code: number | null;
  stderr: string;
  stdout: string;
}

function startApi(env: Record<string, string>): Promise<Exit> {
  const main = ensureBuilt('dist/src/main.js');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A process that started serving instead of stopping is killed, and its exit code says so.
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The test default ALLOW_PRIVATE_URLS (port-less loopback) is refused in production: cleared here.
const PRODUCTION = { NODE_ENV: 'production', ASSET_URL_SECRET: 'start-up-config-asset-secret', ALLOW_PRIVATE_URLS: '' };

describe('configuration errors at start-up', () => {
  it.each([
    ['IP_RATE_LIMIT is not a number', { IP_RATE_LIMIT: 'lots' }, /^Configuration error: IP_RATE_LIMIT must be/],
    [
      'LICENSE_SIGNING_KEY is not a key',
      { LICENSE_SIGNING_KEY: 'bm90IGEga2V5' },
      /^Configuration error: LICENSE_SIGNING_KEY must be base64 of a PKCS#8 DER Ed25519 private key/,
    ],
    [
      'LICENSE_SIGNING_KEY is missing in production',
      { ...PRODUCTION, LICENSE_SIGNING_KEY: '' },
      /^Configuration error: LICENSE_SIGNING_KEY must be set in production/,
    ],
  ])(
    '%s: one line on stderr, exit 78, nothing served',
    async (_name, env, message) => {
      const exit = await startApi(env);
      expect({ code: exit.code, lines: exit.stderr.trimEnd().split('\n') }).toEqual({
        code: 78,
        lines: [expect.stringMatching(message)],
      });
      expect(exit.stdout).not.toContain('listening');
    },
    60_000,
  );

  it('a production ALLOW_PRIVATE_URLS name without a port that resolves to this host stops the API: exit 78, nothing served', async () => {
    const name = loopbackHostName();
    // Everything else production needs is set, so only this entry can stop the start.
    const licenseKey = generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' });
    const exit = await startApi({
      ...PRODUCTION,
      LICENSE_SIGNING_KEY: licenseKey.toString('base64'),
      ALLOW_PRIVATE_URLS: name,
    });
    expect({ code: exit.code, lines: exit.stderr.trimEnd().split('\n') }).toEqual({
      code: 78,
      lines: [
        expect.stringMatching(new RegExp(`^Configuration error: ALLOW_PRIVATE_URLS: "${name}" resolves to this host`)),
      ],
    });
    expect(exit.stdout).not.toContain('listening');
  }, 60_000);
});
