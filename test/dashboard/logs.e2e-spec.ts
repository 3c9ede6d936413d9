// The built API as an operator runs it, its output captured at debug level while members are
// invited, choose passwords, sign in (rightly and wrongly), reset them and act with their sessions:
// no password, session token, CSRF token or set-password link appears in any line.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ensureBuilt, ROOT } from '../support/dist-build';
import { waitUntil } from '../support/error-checks';
import { freePort } from '../support/app';
import { linkIn, startSmtp, type TestSmtp } from './mail';
import { uniqueEmail } from '../support/dashboard-session';

describe('dashboard secrets never reach the logs', () => {
  let child: ChildProcessWithoutNullStreams;
  let smtp: TestSmtp;
  let output = '';
  let base = '';
  const adminToken = 'dashboard-logs-admin-token-4d2b';
  const secrets: Record<string, string> = {};

  async function send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { origin: base, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  }

  beforeAll(async () => {
    smtp = await startSmtp();
    const main = ensureBuilt('dist/src/main.js');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [main], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_BASE_URL: base,
        LOG_LEVEL: 'debug',
        ADMIN_TOKEN: adminToken,
        SMTP_URL: smtp.url,
      },
    });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitUntil(async () => output.includes('listening on') || child.exitCode !== null, 30_000, 50);
    if (child.exitCode !== null) throw new Error(`API exited: ${output}`);

    const email = uniqueEmail('logs');
    const created = await send(
      'POST',
      '/v1/admin/accounts',
      { 'x-admin-token': adminToken },
      {
        name: 'Logs Co',
        plan: 'pro',
        owner_email: email,
      },
    );
    const link: string = created.body.owner_invite_url;
    secrets.inviteToken = new URL(link).hash.slice('#token='.length);
    secrets.password = 'a password nobody may log';
    const redeemed = await send(
      'POST',
      '/v1/password-links/redeem',
      {},
      {
        token: secrets.inviteToken,
        password: secrets.password,
      },
    );
    expect(redeemed.status).toBe(201);
    await send('POST', '/v1/sessions', {}, { email, password: 'the wrong password, also secret' });
    secrets.wrongPassword = 'the wrong password, also secret';
    const signedIn = await send('POST', '/v1/sessions', {}, { email, password: secrets.password });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0];
    secrets.sessionToken = cookie.split('=')[1];
    secrets.csrfToken = signedIn.body.csrf_token;
    expect(
      (await send('POST', '/v1/account/api-keys', { cookie, 'x-csrf-token': secrets.csrfToken }, { scopes: ['audio'] }))
        .status,
    ).toBe(201);
    await send('POST', '/v1/password-links', {}, { email });
    secrets.resetToken = new URL(linkIn(await smtp.waitForMail(email, /Reset/))).hash.slice('#token='.length);
    await send('POST', '/v1/password-links/inspect', {}, { token: secrets.resetToken });
    await send('DELETE', '/v1/sessions/current', { cookie, 'x-csrf-token': secrets.csrfToken });
    await send('GET', '/v1/account/credits', { cookie });
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await smtp?.close();
  });

  it('no password, session or CSRF token, or link token in any line', async () => {
    // Request lines are written through a buffer flushed every 250 ms: wait for the last request's.
    await waitUntil(async () => (output.match(/"url":"\/v1\/account\/credits"/g) ?? []).length >= 1, 5000, 50);
    const lines = output.split('\n').filter((line) => line.trim());
    expect(lines.some((line) => line.includes('/v1/sessions'))).toBe(true);
    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret.length).toBeGreaterThan(8);
      expect([name, lines.filter((line) => line.includes(secret))]).toEqual([name, []]);
    }
  });
});
