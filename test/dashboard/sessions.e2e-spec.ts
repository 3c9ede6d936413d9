// Dashboard sign-in over the public API: the operator's owner invitation (mailed through a real SMTP
// server), set-password links, the session cookie and its CSRF token, sign-out (here and everywhere),
// idle and absolute expiry, and the limits on failed sign-ins. No browser: what the dashboard sends.
import { generateKeyPairSync } from 'node:crypto';
import { DataSource } from 'typeorm';
import { call, startApi, type TestApi } from '../support/app';
import { ensureBuilt, runScript } from '../support/dist-build';
import { expectError } from '../support/error-checks';
import { linkIn, startSmtp, type TestSmtp } from './mail';
import {
  asMember,
  PASSWORD,
  redeem,
  sameOrigin,
  signIn,
  uniqueEmail,
  type TestSession,
} from '../support/dashboard-session';

describe('dashboard sessions', () => {
  let smtp: TestSmtp;
  let api: TestApi;
  let db: DataSource;

  beforeAll(async () => {
    smtp = await startSmtp();
    api = await startApi({ SMTP_URL: smtp.url, MAIL_FROM: 'mediajobs <dashboard@example.com>' });
    db = api.app.get(DataSource);
  });

  afterAll(async () => {
    await api?.close();
    await smtp?.close();
  });

  /** An account created by an operator with its first owner, who follows the mailed link. */
  async function newOwner(): Promise<{ email: string; accountId: string; apiKey: string; session: TestSession }> {
    const email = uniqueEmail('owner');
    const created = await call(api, 'POST', '/v1/admin/accounts', {
      admin: true,
      body: { name: 'Acme Studios', plan: 'pro', owner_email: email },
    });
    expect(created.status).toBe(201);
    const mail = await smtp.waitForMail(email, /invited to Acme Studios/);
    const session = await redeem(api, linkIn(mail), PASSWORD);
    return { email, accountId: created.body.account.id, apiKey: created.body.api_key.key, session };
  }

  it('an operator creates the first owner, who gets a one-time link by mail and signs in with it', async () => {
    const email = uniqueEmail('Owner');
    const created = await call(api, 'POST', '/v1/admin/accounts', {
      admin: true,
      body: { name: 'Acme Studios', plan: 'starter', owner_email: email },
    });
    expect(created.status).toBe(201);
    expect(created.body.owner).toMatchObject({
      object: 'member',
      email: email.toLowerCase(),
      role: 'owner',
      status: 'invited',
      joined_at: null,
    });
    const url: string = created.body.owner_invite_url;
    expect(url).toMatch(new RegExp(`^${api.url}/dashboard/set-password#token=[A-Za-z0-9_-]{43}$`));

    const mail = await smtp.waitForMail(email, /invited to Acme Studios/);
    expect(linkIn(mail)).toBe(url);
    expect(mail.text).toContain('as owner');

    const token = new URL(url).hash.slice('#token='.length);
    const inspected = await call(api, 'POST', '/v1/password-links/inspect', { body: { token } });
    expect(inspected.status).toBe(200);
    expect(inspected.body).toMatchObject({
      object: 'password_link',
      purpose: 'invite',
      email: email.toLowerCase(),
      account_name: 'Acme Studios',
      role: 'owner',
    });

    const short = await call(api, 'POST', '/v1/password-links/redeem', { body: { token, password: 'too short' } });
    expectError(api, short, 'invalid_parameter', 'password');
    expect(short.body.error.message).toContain('at least 12 characters');

    const session = await redeem(api, url, PASSWORD);
    expect(session.body).toMatchObject({
      object: 'session',
      member: { email: email.toLowerCase(), role: 'owner', status: 'active' },
      account: { id: created.body.account.id, name: 'Acme Studios', plan: 'starter' },
      idle_timeout_seconds: 7200,
    });
    expect(session.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // One time only.
    const again = await call(api, 'POST', '/v1/password-links/redeem', { body: { token, password: PASSWORD } });
    expectError(api, again, 'invalid_parameter', 'token');
    const inspectAgain = await call(api, 'POST', '/v1/password-links/inspect', { body: { token } });
    expectError(api, inspectAgain, 'invalid_parameter', 'token');

    // The link is stored only as a hash: its token appears nowhere in the database.
    const stored = await db.query(`SELECT encode(token_hash, 'hex') AS hash FROM password_links`);
    expect(JSON.stringify(stored)).not.toContain(token);
  });

  it('the admin CLI creates the first owner and prints owner_invite_url (the mail carries the same link); password-link prints a fresh one', async () => {
    const cli = ensureBuilt('dist/src/admin-cli.js');
    const email = uniqueEmail('cli');
    // The CLI reads the same configuration as the API: its links name this API, its mail goes to this SMTP server.
    const saved = { SMTP_URL: process.env.SMTP_URL, PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL };
    Object.assign(process.env, { SMTP_URL: smtp.url, PUBLIC_BASE_URL: api.url });
    try {
      const created = await runScript(cli, [
        'create-account',
        '--name',
        'CLI Studio',
        '--plan',
        'starter',
        '--owner-email',
        email,
      ]);
      expect(created.code).toBe(0);
      const printed = JSON.parse(created.stdout);
      expect(printed.owner).toMatchObject({ email, role: 'owner', status: 'invited' });
      expect(printed.owner_invite_url).toMatch(new RegExp(`^${api.url}/dashboard/set-password#token=`));
      // The mail went out before the command exited.
      expect(linkIn(await smtp.waitForMail(email, /invited to CLI Studio/, 1000))).toBe(printed.owner_invite_url);

      const fresh = await runScript(cli, ['password-link', email]);
      expect(fresh.code).toBe(0);
      const link = JSON.parse(fresh.stdout);
      expect(link).toMatchObject({ object: 'password_link_url', email });
      // Only the newest link works.
      const old = await call(api, 'POST', '/v1/password-links/inspect', {
        body: { token: new URL(printed.owner_invite_url).hash.slice('#token='.length) },
      });
      expectError(api, old, 'invalid_parameter', 'token');
      expect((await redeem(api, link.url, PASSWORD)).body.account.name).toBe('CLI Studio');

      const bad = await runScript(cli, ['create-account', '--name', 'X', '--owner-email', 'not-an-email']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--owner-email must be an email address');
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('the session cookie is HttpOnly, SameSite=Lax, Path=/, not Secure outside production, and its token is stored hashed', async () => {
    const { email } = await newOwner();
    const session = await signIn(api, email, PASSWORD);
    const attributes = session.setCookie.split(';').map((part) => part.trim());
    expect(attributes[0]).toMatch(/^mj_session=[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/', 'Max-Age=86400']));
    expect(attributes).not.toContain('Secure');
    const token = session.cookie.split('=')[1];
    const rows: { token_hash: Buffer }[] = await db.query('SELECT token_hash FROM member_sessions');
    expect(rows.some((row) => row.token_hash.toString('utf8').includes(token))).toBe(false);
    expect(JSON.stringify(await db.query('SELECT * FROM member_sessions'))).not.toContain(token);
  });

  it('a session reaches the same /v1 API as a key, with the envelope and rate-limit headers', async () => {
    const { session, apiKey } = await newOwner();
    const withSession = await asMember(api, session, 'GET', '/v1/account/credits');
    const withKey = await call(api, 'GET', '/v1/account/credits', { key: apiKey });
    expect(withSession.status).toBe(200);
    expect(withSession.body).toEqual(withKey.body);
    expect(withSession.headers.get('x-ratelimit-limit')).toBe('100');
    // What the overview shows use against: the plan's limits and the jobs running now.
    expect(withSession.body).toMatchObject({
      running_jobs: 0,
      limits: { requests_per_second: 100, concurrent_jobs: 10, max_output_height: 2160, apis: ['sdr2hdr', 'audio'] },
    });
    const usage = await asMember(api, session, 'GET', '/v1/account/usage?days=7');
    expect(usage.body).toMatchObject({ object: 'usage', total_charged_credits: 0, total_charged_usd: 0 });
    expect(usage.body.days).toHaveLength(7);
    expect(usage.body.days[6]).toEqual({
      date: new Date().toISOString().slice(0, 10),
      charged_credits: 0,
      charged_usd: 0,
    });

    const created = await asMember(api, session, 'POST', '/v1/account/api-keys', { body: { scopes: ['sdr2hdr'] } });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^mjk_/);
    const missingJob = await asMember(api, session, 'GET', '/v1/sdr2hdr/jobs/job_doesnotexist0000');
    expectError(api, missingJob, 'job_not_found', 'job_id');
  });

  it('a change without the CSRF token, with a wrong one, or from another origin is refused with 403', async () => {
    const { session } = await newOwner();
    const body = { scopes: ['audio'] };
    const noToken = await call(api, 'POST', '/v1/account/api-keys', {
      body,
      headers: { cookie: session.cookie, ...sameOrigin(api) },
    });
    expectError(api, noToken, 'csrf_check_failed', 'X-CSRF-Token');

    const wrongToken = await asMember(api, session, 'POST', '/v1/account/api-keys', {
      body,
      headers: { 'x-csrf-token': 'A'.repeat(43) },
    });
    expectError(api, wrongToken, 'csrf_check_failed', 'X-CSRF-Token');

    const otherOrigin = await asMember(api, session, 'POST', '/v1/account/api-keys', {
      body,
      headers: { origin: 'https://evil.example' },
    });
    expectError(api, otherOrigin, 'csrf_check_failed', 'Origin');

    // No Origin and no Referer at all: not provably the dashboard.
    const noOrigin = await call(api, 'POST', '/v1/account/api-keys', {
      body,
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    });
    expectError(api, noOrigin, 'csrf_check_failed', 'Origin');

    // A same-origin Referer stands in for a missing Origin.
    const viaReferer = await call(api, 'POST', '/v1/account/api-keys', {
      body,
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, referer: `${api.url}/dashboard/keys` },
    });
    expect(viaReferer.status).toBe(201);

    // Another session's token does not fit this session.
    const other = await newOwner();
    const foreignToken = await asMember(api, session, 'DELETE', '/v1/sessions/current', {
      headers: { 'x-csrf-token': other.session.csrf },
    });
    expectError(api, foreignToken, 'csrf_check_failed', 'X-CSRF-Token');

    const keys = await asMember(api, session, 'GET', '/v1/account/api-keys');
    expect(keys.body.data.filter((key: { scopes: string[] }) => key.scopes.join() === 'audio')).toHaveLength(1);
  });

  it('sign-in from another origin is refused (login CSRF); one answer for an unknown email and a wrong password', async () => {
    const { email } = await newOwner();
    const foreign = await call(api, 'POST', '/v1/sessions', {
      body: { email, password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expectError(api, foreign, 'csrf_check_failed', 'Origin');

    const wrong = await call(api, 'POST', '/v1/sessions', { body: { email, password: 'not the password' } });
    const unknown = await call(api, 'POST', '/v1/sessions', {
      body: { email: uniqueEmail('nobody'), password: 'not the password' },
    });
    expectError(api, wrong, 'invalid_credentials', 'password');
    expectError(api, unknown, 'invalid_credentials', 'password');
    const strip = (body: any) => ({ ...body.error, request_id: null });
    expect(strip(unknown.body)).toEqual(strip(wrong.body));
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  it('the 11th wrong password in a minute is 429 with Retry-After, even when the 11th is right', async () => {
    const { email } = await newOwner();
    // An instance with Redis counters of its own: this test's loopback IP has no attempts yet, and
    // the other tests' IP counter is left alone.
    const limited = await startApi({ REDIS_PREFIX: `${process.env.REDIS_PREFIX}email` });
    try {
      for (let attempt = 1; attempt <= 10; attempt++) {
        const response = await call(limited, 'POST', '/v1/sessions', { body: { email, password: `wrong ${attempt}` } });
        expectError(limited, response, 'invalid_credentials');
      }
      const eleventh = await call(limited, 'POST', '/v1/sessions', { body: { email, password: 'wrong 11' } });
      expectError(limited, eleventh, 'rate_limit_exceeded');
      const retryAfter = Number(eleventh.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(eleventh.body.error.details).toMatchObject({
        limit: 10,
        window_seconds: 60,
        retry_after_seconds: retryAfter,
      });
      const right = await call(limited, 'POST', '/v1/sessions', { body: { email, password: PASSWORD } });
      expectError(limited, right, 'rate_limit_exceeded');
    } finally {
      await limited.close();
    }
  });

  it('failed sign-ins from one IP are limited across emails too', async () => {
    // Fresh API instance: its loopback IP has made no attempts in this minute.
    const other = await startApi({ SIGN_IN_ATTEMPTS_PER_MINUTE: '3', REDIS_PREFIX: `${process.env.REDIS_PREFIX}ip` });
    try {
      for (let attempt = 1; attempt <= 3; attempt++) {
        const response = await call(other, 'POST', '/v1/sessions', {
          body: { email: uniqueEmail('guess'), password: 'guess guess guess' },
        });
        expectError(other, response, 'invalid_credentials');
      }
      const fourth = await call(other, 'POST', '/v1/sessions', {
        body: { email: uniqueEmail('guess'), password: 'guess guess guess' },
      });
      expectError(other, fourth, 'rate_limit_exceeded');
    } finally {
      await other.close();
    }
  });

  it('signing in starts a new session: a cookie the browser brought along is revoked (no fixation)', async () => {
    const { email, session: first } = await newOwner();
    const second = await call(api, 'POST', '/v1/sessions', {
      body: { email, password: PASSWORD },
      headers: { cookie: first.cookie },
    });
    expect(second.status).toBe(201);
    const newCookie = (second.headers.get('set-cookie') ?? '').split(';')[0];
    expect(newCookie).not.toBe(first.cookie);
    expectError(api, await asMember(api, first, 'GET', '/v1/account/credits'), 'invalid_session');
    const fresh = { cookie: newCookie, csrf: second.body.csrf_token, body: second.body, setCookie: '' };
    expect((await asMember(api, fresh, 'GET', '/v1/account/credits')).status).toBe(200);
  });

  it('sign-out ends the session and clears the cookie; sign-out everywhere ends every session of the member', async () => {
    const { email, session: one } = await newOwner();
    const two = await signIn(api, email, PASSWORD);
    const three = await signIn(api, email, PASSWORD);

    const current = await asMember(api, one, 'GET', '/v1/sessions/current');
    expect(current.status).toBe(200);
    expect(current.body.csrf_token).toBe(one.csrf);
    expect(current.headers.get('cache-control')).toBe('no-store');

    const out = await asMember(api, one, 'DELETE', '/v1/sessions/current');
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^mj_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/);
    const after = await asMember(api, one, 'GET', '/v1/account/credits');
    expectError(api, after, 'invalid_session', 'Cookie');
    expect(after.headers.get('set-cookie')).toMatch(/^mj_session=;/);
    expect((await asMember(api, two, 'GET', '/v1/account/credits')).status).toBe(200);

    const everywhere = await asMember(api, two, 'DELETE', '/v1/sessions');
    expect(everywhere.body).toEqual({ object: 'session_revocation', revoked_sessions: 2 });
    expectError(api, await asMember(api, two, 'GET', '/v1/account/credits'), 'invalid_session');
    expectError(api, await asMember(api, three, 'GET', '/v1/account/credits'), 'invalid_session');
  });

  it('a session ends after its idle timeout and at its absolute expiry', async () => {
    const { email, session: idle } = await newOwner();
    const old = await signIn(api, email, PASSWORD);
    expect((await asMember(api, idle, 'GET', '/v1/account/credits')).status).toBe(200);
    // Two hours and a minute without a request; and a session whose 24 h are up.
    await db.query(`UPDATE member_sessions SET last_seen_at = now() - interval '2 hours 1 minute' WHERE id = $1`, [
      idle.body.member && (await sessionId(idle)),
    ]);
    await db.query(`UPDATE member_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      await sessionId(old),
    ]);
    expectError(api, await asMember(api, idle, 'GET', '/v1/account/credits'), 'invalid_session');
    expectError(api, await asMember(api, old, 'GET', '/v1/account/credits'), 'invalid_session');
  });

  /** The id of the session a cookie stands for (tests only: the API never shows it). */
  async function sessionId(session: TestSession): Promise<string> {
    const found = await db.query(`SELECT id FROM member_sessions WHERE csrf_token = $1`, [session.csrf]);
    return found[0].id;
  }

  it('forgot password: the same answer for any email; a member gets a reset link, which ends their other sessions', async () => {
    const { email, session } = await newOwner();
    const unknownEmail = uniqueEmail('stranger');
    const unknown = await call(api, 'POST', '/v1/password-links', { body: { email: unknownEmail } });
    const known = await call(api, 'POST', '/v1/password-links', { body: { email: email.toUpperCase() } });
    expect(unknown.status).toBe(202);
    expect(known.status).toBe(202);
    expect({ ...known.body, email: null }).toEqual({ ...unknown.body, email: null });

    const mail = await smtp.waitForMail(email, /Reset your mediajobs password/);
    const reset = await redeem(api, linkIn(mail), 'a brand new passphrase');
    expect(reset.body.member.email).toBe(email);
    expectError(api, await asMember(api, session, 'GET', '/v1/account/credits'), 'invalid_session');
    expectError(
      api,
      await call(api, 'POST', '/v1/sessions', { body: { email, password: PASSWORD } }),
      'invalid_credentials',
    );
    expect((await signIn(api, email, 'a brand new passphrase')).body.member.email).toBe(email);
    expect(smtp.mails.some((received) => received.to === unknownEmail)).toBe(false);
  });

  it('only owners manage members; a viewer reads but changes nothing; a developer uses keys but not owner routes', async () => {
    const owner = await newOwner();
    const viewerEmail = uniqueEmail('viewer');
    const developerEmail = uniqueEmail('developer');
    const invitedViewer = await asMember(api, owner.session, 'POST', '/v1/account/members', {
      body: { email: viewerEmail, role: 'viewer' },
    });
    expect(invitedViewer.status).toBe(201);
    expect(invitedViewer.body).toMatchObject({ role: 'viewer', status: 'invited', invite_url: expect.any(String) });
    const viewer = await redeem(api, linkIn(await smtp.waitForMail(viewerEmail, /invited/)), PASSWORD);
    await asMember(api, owner.session, 'POST', '/v1/account/members', {
      body: { email: developerEmail, role: 'developer' },
    });
    const developer = await redeem(api, linkIn(await smtp.waitForMail(developerEmail, /invited/)), PASSWORD);

    // Viewer: reads, no changes.
    expect((await asMember(api, viewer, 'GET', '/v1/account/credits')).status).toBe(200);
    expect((await asMember(api, viewer, 'GET', '/v1/account/api-keys')).status).toBe(200);
    const viewerKey = await asMember(api, viewer, 'POST', '/v1/account/api-keys', { body: { scopes: ['audio'] } });
    expectError(api, viewerKey, 'insufficient_scope');
    expect(viewerKey.body.error.message).toContain('viewer');
    expectError(api, await asMember(api, viewer, 'GET', '/v1/account/members'), 'insufficient_scope');
    // A viewer may still sign themselves out.
    expect((await asMember(api, viewer, 'DELETE', '/v1/sessions/current')).status).toBe(200);

    // Developer: keys yes; members and the spend cap no.
    expect(
      (await asMember(api, developer, 'POST', '/v1/account/api-keys', { body: { scopes: ['audio'] } })).status,
    ).toBe(201);
    const developerCap = await asMember(api, developer, 'PATCH', '/v1/account', { body: { spend_limit_usd: 1 } });
    expectError(api, developerCap, 'insufficient_scope');
    expect(developerCap.body.error.message).toContain('owner');
    expectError(
      api,
      await asMember(api, developer, 'POST', '/v1/account/members', { body: { email: uniqueEmail(), role: 'owner' } }),
      'insufficient_scope',
    );

    // An API key is not a person: owner-only routes refuse it, whatever its scopes.
    const keyCap = await call(api, 'PATCH', '/v1/account', { key: owner.apiKey, body: { spend_limit_usd: 1 } });
    expectError(api, keyCap, 'insufficient_scope');
    expect(keyCap.body.error.message).toContain('API keys cannot');
    expectError(api, await call(api, 'GET', '/v1/account/members', { key: owner.apiKey }), 'insufficient_scope');
    // With neither a key nor a session.
    expectError(api, await call(api, 'GET', '/v1/account/members'), 'invalid_session', 'Cookie');

    const members = await asMember(api, owner.session, 'GET', '/v1/account/members');
    expect(
      members.body.data.map((member: { email: string; role: string; status: string }) => member.role).sort(),
    ).toEqual(['developer', 'owner', 'viewer']);
  });

  it('an owner manages roles, invitations and removals; an account keeps at least one owner', async () => {
    const owner = await newOwner();
    const list = await asMember(api, owner.session, 'GET', '/v1/account/members');
    const self = list.body.data[0];
    expectError(
      api,
      await asMember(api, owner.session, 'PATCH', `/v1/account/members/${self.id}`, { body: { role: 'viewer' } }),
      'invalid_parameter',
      'role',
    );
    expectError(
      api,
      await asMember(api, owner.session, 'DELETE', `/v1/account/members/${self.id}`),
      'invalid_parameter',
      'id',
    );

    const email = uniqueEmail('second');
    const invited = await asMember(api, owner.session, 'POST', '/v1/account/members', {
      body: { email, role: 'developer' },
    });
    const firstMail = await smtp.waitForMail(email, /invited/);
    const resent = await asMember(
      api,
      owner.session,
      'POST',
      `/v1/account/members/${invited.body.id}/resend-invitation`,
    );
    expect(resent.status).toBe(200);
    const secondMail = await smtp.waitForMail(email, /invited/);
    // The first link stopped working when the second was issued.
    const stale = await call(api, 'POST', '/v1/password-links/redeem', {
      body: { token: new URL(linkIn(firstMail)).hash.slice(7), password: PASSWORD },
    });
    expectError(api, stale, 'invalid_parameter', 'token');
    const second = await redeem(api, linkIn(secondMail), PASSWORD);

    const promoted = await asMember(api, owner.session, 'PATCH', `/v1/account/members/${invited.body.id}`, {
      body: { role: 'owner' },
    });
    expect(promoted.body).toMatchObject({ role: 'owner', status: 'active' });
    // With a second owner, the first may step down; the role applies to the live session at once.
    expect(
      (await asMember(api, owner.session, 'PATCH', `/v1/account/members/${self.id}`, { body: { role: 'viewer' } }))
        .status,
    ).toBe(200);
    expectError(api, await asMember(api, owner.session, 'GET', '/v1/account/members'), 'insufficient_scope');

    // Removing a member ends their sessions.
    const removed = await asMember(api, second, 'DELETE', `/v1/account/members/${self.id}`);
    expect(removed.body).toMatchObject({ id: self.id, deleted: true });
    expectError(api, await asMember(api, owner.session, 'GET', '/v1/account/credits'), 'invalid_session');

    // The same email cannot be a member twice (nor of another account).
    const duplicate = await asMember(api, second, 'POST', '/v1/account/members', { body: { email, role: 'viewer' } });
    expectError(api, duplicate, 'invalid_parameter', 'email');
  });

  it('an owner sets, lowers and removes the monthly spend cap (the column every submit checks)', async () => {
    const owner = await newOwner();
    const set = await asMember(api, owner.session, 'PATCH', '/v1/account', { body: { spend_limit_usd: 12.5 } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ object: 'account', id: owner.accountId, spend_limit_usd: 12.5 });
    expect((await asMember(api, owner.session, 'GET', '/v1/account/credits')).body.spend_limit_usd).toBe(12.5);
    expect((await asMember(api, owner.session, 'GET', '/v1/account')).body.spend_limit_usd).toBe(12.5);
    const removed = await asMember(api, owner.session, 'PATCH', '/v1/account', { body: { spend_limit_usd: null } });
    expect(removed.body.spend_limit_usd).toBeNull();
    expectError(
      api,
      await asMember(api, owner.session, 'PATCH', '/v1/account', { body: { spend_limit_usd: -1 } }),
      'invalid_parameter',
      'spend_limit_usd',
    );
    expectError(
      api,
      await asMember(api, owner.session, 'PATCH', '/v1/account', { body: { spend_limit_usd: 1.005 } }),
      'invalid_parameter',
      'spend_limit_usd',
    );
    expectError(
      api,
      await asMember(api, owner.session, 'PATCH', '/v1/account', { body: {} }),
      'missing_parameter',
      'spend_limit_usd',
    );
  });

  it('a session of account A never sees account B: lists hold only A, B ids answer like missing ones', async () => {
    const a = await newOwner();
    const b = await newOwner();
    const bKeys = await call(api, 'GET', '/v1/account/api-keys', { key: b.apiKey });
    const bKeyId = bKeys.body.data[0].id;
    const bMembers = await asMember(api, b.session, 'GET', '/v1/account/members');
    const bMemberId = bMembers.body.data[0].id;
    const bEndpoint = await call(api, 'POST', '/v1/webhook-endpoints', {
      key: b.apiKey,
      body: { url: 'http://127.0.0.1:9/hook' },
    });

    const aKeys = await asMember(api, a.session, 'GET', '/v1/account/api-keys');
    expect(aKeys.body.data.map((key: { id: string }) => key.id)).not.toContain(bKeyId);
    expect((await asMember(api, a.session, 'GET', '/v1/account')).body.id).toBe(a.accountId);
    expectError(api, await asMember(api, a.session, 'DELETE', `/v1/account/api-keys/${bKeyId}`), 'resource_missing');
    expectError(
      api,
      await asMember(api, a.session, 'PATCH', `/v1/account/members/${bMemberId}`, { body: { role: 'viewer' } }),
      'resource_missing',
    );
    expectError(
      api,
      await asMember(api, a.session, 'GET', `/v1/webhook-endpoints/${bEndpoint.body.id}`),
      'resource_missing',
    );
    expectError(
      api,
      await asMember(api, a.session, 'POST', `/v1/webhook-endpoints/${bEndpoint.body.id}/test`),
      'resource_missing',
    );
    const aMembers = await asMember(api, a.session, 'GET', '/v1/account/members');
    expect(aMembers.body.data.map((member: { id: string }) => member.id)).not.toContain(bMemberId);
    // B's key still works: A's attempts changed nothing.
    expect((await call(api, 'GET', '/v1/account/credits', { key: b.apiKey })).status).toBe(200);
  });

  it('a member of a suspended account is refused everywhere but may still see who they are and sign out', async () => {
    const owner = await newOwner();
    await call(api, 'PATCH', `/v1/admin/accounts/${owner.accountId}`, { admin: true, body: { status: 'suspended' } });
    expectError(api, await asMember(api, owner.session, 'GET', '/v1/account/credits'), 'account_suspended');
    expectError(
      api,
      await asMember(api, owner.session, 'POST', '/v1/account/api-keys', { body: { scopes: ['audio'] } }),
      'account_suspended',
    );
    const current = await asMember(api, owner.session, 'GET', '/v1/sessions/current');
    expect(current.status).toBe(200);
    expect(current.body.account.status).toBe('suspended');
    expect((await asMember(api, owner.session, 'DELETE', '/v1/sessions/current')).status).toBe(200);
    expect((await signIn(api, owner.email, PASSWORD)).body.account.status).toBe('suspended');
  });

  it('in production the session cookie is Secure as well', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const production = await startApi({
      NODE_ENV: 'production',
      ALLOW_PRIVATE_URLS: '', // the test default (port-less loopback) is refused in production
      ASSET_URL_SECRET: 'production-test-asset-secret',
      LICENSE_SIGNING_KEY: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      LOG_LEVEL: 'silent',
    });
    try {
      const created = await call(production, 'POST', '/v1/admin/accounts', {
        admin: true,
        body: { name: 'Prod', plan: 'free', owner_email: uniqueEmail('prod') },
      });
      const session = await redeem(production, created.body.owner_invite_url, PASSWORD);
      expect(session.setCookie.split('; ')).toEqual(
        expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/', 'Secure']),
      );
    } finally {
      await production.close();
    }
  });
});
