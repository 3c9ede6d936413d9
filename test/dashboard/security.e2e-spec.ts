// The dashboard's security as a browser sees it: the cookie's flags, a page of another origin that
// tries to act with a member's session, a viewer who is offered nothing to change (and refused by the
// API), one account's session in front of another account's ids, and signing out here and everywhere.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, type TestApi } from '../support/app';
import { startStack } from '../support/worker';
import { upload } from '../support/jobs';
import { sdrMp4 } from '../fixtures/media';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { linkIn, startSmtp, type TestSmtp } from './mail';
import { asMember, PASSWORD, redeem, signIn, uniqueEmail, type TestSession } from '../support/dashboard-session';

describe('dashboard security in a browser', () => {
  let smtp: TestSmtp;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let attacker: Server;
  let attackerUrl: string;
  const browsers: DashboardBrowser[] = [];

  /** An account whose owner has chosen a password (through the API: the browser journeys do it by hand). */
  async function newOwner(name: string) {
    const email = uniqueEmail(name.toLowerCase().replace(/[^a-z]+/g, '-'));
    const created = await call(api, 'POST', '/v1/admin/accounts', {
      admin: true,
      body: { name, plan: 'pro', owner_email: email },
    });
    await call(api, 'POST', `/v1/admin/accounts/${created.body.account.id}/credits`, {
      admin: true,
      body: { credits: 1000, reason: 'test' },
    });
    await redeem(api, created.body.owner_invite_url, PASSWORD);
    return { email, accountId: created.body.account.id as string, apiKey: created.body.api_key.key as string };
  }

  async function browserSignedIn(email: string): Promise<DashboardBrowser> {
    const browser = await openBrowser();
    browsers.push(browser);
    await browser.page.goto(`${api.url}/login`);
    await browser.page.getByLabel('Email').fill(email);
    await browser.page.getByLabel('Password').fill(PASSWORD);
    await browser.page.getByRole('button', { name: 'Sign in' }).click();
    await browser.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    return browser;
  }

  beforeAll(async () => {
    smtp = await startSmtp();
    stack = await startStack({ REGION: 'dashboard-security', SMTP_URL: smtp.url });
    api = stack.api;
    // Another origin on the same host (another port): the same *site*, so SameSite=Lax still sends the
    // cookie, which is exactly the case the Origin check and the CSRF token are for.
    attacker = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => attacker?.close(() => resolve()));
    await stack?.close();
    await smtp?.close();
  });

  // Each test's browsers close after it (a Chromium each: the machine is small).
  afterEach(async () => {
    const open = browsers.splice(0);
    const problems = open.flatMap((browser) => browser.problems.splice(0));
    for (const browser of open) await browser.close();
    expect(problems).toEqual([]);
  });

  it('sign-in: a wrong password is answered in words; the session cookie is HttpOnly, SameSite=Lax, Path=/, not readable by scripts', async () => {
    const owner = await newOwner('Cookie Co');
    const browser = await openBrowser();
    browsers.push(browser);
    const page = browser.page;
    await page.goto(`${api.url}/`);
    await page.getByRole('heading', { level: 1, name: 'Sign in to mediajobs' }).waitFor();
    expect(page.url()).toBe(`${api.url}/dashboard/login?next=%2F`);
    await checkPage(browser, 'sign-in');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('The email or password is not right.', { exact: false }).waitFor();
    await alert.getByText('invalid_credentials', { exact: true }).waitFor();
    await checkPage(browser, 'sign-in-error');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const [cookie] = (await browser.context.cookies(api.url)).filter((found) => found.name === 'mj_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });
    expect(await page.evaluate(() => (globalThis as any).document.cookie as string)).not.toContain('mj_session');

    // A page that does not exist in the app says so.
    await page.goto(`${api.url}/dashboard/nowhere`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await checkPage(browser, 'not-found');
  });

  it('a page of another origin cannot act with the member’s session: no CSRF token, and the Origin is refused', async () => {
    const owner = await newOwner('Target Co');
    const keys = await call(api, 'GET', '/v1/account/api-keys', { key: owner.apiKey });
    const keyId: string = keys.body.data[0].id;
    const browser = await browserSignedIn(owner.email);
    const page = browser.page;

    // The other site's page posts a form at "rotate" (which would revoke the key): the browser sends
    // the session cookie (same site), and the API refuses it.
    await page.goto(attackerUrl);
    const refused = page.waitForResponse((response) => response.url().endsWith(`/v1/account/api-keys/${keyId}/rotate`));
    await page.evaluate(
      ([action]) => {
        const document = (globalThis as any).document;
        const form = document.createElement('form');
        form.method = 'POST';
        form.action = action;
        document.body.appendChild(form);
        form.submit();
      },
      [`${api.url}/v1/account/api-keys/${keyId}/rotate`],
    );
    const answer = await refused;
    expect(answer.status()).toBe(403);
    expect((await answer.json()).error).toMatchObject({ code: 'csrf_check_failed', param: 'Origin' });
    // Even with the session's CSRF token (were it ever leaked), a request from that origin is refused.
    await page.goto(attackerUrl);
    const session = (await browser.context.cookies(api.url)).find((found) => found.name === 'mj_session')!;
    const member: TestSession = { cookie: `mj_session=${session.value}`, csrf: '', body: null, setCookie: '' };
    member.csrf = (await asMember(api, member, 'GET', '/v1/sessions/current')).body.csrf_token;
    const withToken = await call(api, 'POST', `/v1/account/api-keys/${keyId}/rotate`, {
      headers: { cookie: member.cookie, 'x-csrf-token': member.csrf, origin: attackerUrl },
    });
    expect(withToken.body.error).toMatchObject({ code: 'csrf_check_failed', param: 'Origin' });

    // Nothing changed: the key works and was not rotated.
    const after = await call(api, 'GET', '/v1/account/api-keys', { key: owner.apiKey });
    expect(after.body.data).toEqual(keys.body.data.map((key: object) => ({ ...key, last_used_at: expect.anything() })));
  });

  it('a viewer is offered nothing to change, and the API refuses the change anyway (403)', async () => {
    const owner = await newOwner('Viewer Co');
    const ownerSession = await signIn(api, owner.email, PASSWORD);
    const viewerEmail = uniqueEmail('viewer');
    await asMember(api, ownerSession, 'POST', '/v1/account/members', { body: { email: viewerEmail, role: 'viewer' } });
    const link = linkIn(await smtp.waitForMail(viewerEmail, /invited to Viewer Co/));

    const browser = await openBrowser();
    browsers.push(browser);
    const page = browser.page;
    await page.goto(link);
    await page.getByText('You are joining Viewer Co as viewer').waitFor();
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill('something else entirely');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByText('The two passwords differ.').waitFor();
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await page.getByRole('link', { name: 'Settings' }).count()).toBe(0);

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('Your role (viewer) can see the keys but not create, rotate or revoke them.').waitFor();
    expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Revoke key/ }).count()).toBe(0);
    await checkPage(browser, 'api-keys-viewer');

    // The page does not offer it; the API refuses it all the same, with the session's own CSRF token.
    const refused = await page.evaluate(async () => {
      const scope = globalThis as any;
      const current = await (await scope.fetch('/v1/sessions/current')).json();
      const response = await scope.fetch('/v1/account/api-keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': current.csrf_token },
        body: JSON.stringify({ scopes: ['audio'] }),
      });
      return { status: response.status as number, body: await response.json() };
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_scope');
    // (Chromium logs the 403 as a failed resource; that one is the point of this test.)
    browser.problems.splice(0);

    await page.getByRole('link', { name: 'New job' }).first().click();
    await page.getByText('Your role (viewer) can look at jobs but not start them.').waitFor();
    await checkPage(browser, 'new-job-viewer');
    await page.goto(`${api.url}/dashboard/settings`);
    await page.getByText('Only owners of the account change its settings and members.').waitFor();
  });

  it("a session of account A never sees account B's job, and B's lists hold nothing of A", async () => {
    const a = await newOwner('Account A');
    const b = await newOwner('Account B');
    const uploadId = await upload(api, a.apiKey, await sdrMp4());
    const job = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: a.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(job.status).toBe(202);

    const browser = await browserSignedIn(b.email);
    const page = browser.page;
    await page.goto(`${api.url}/dashboard/jobs/sdr2hdr/${job.body.job_id}`);
    const alert = page.getByRole('alert');
    await alert.getByText('job_not_found', { exact: true }).waitFor();
    expect(await page.getByText('Status:').count()).toBe(0);
    await checkPage(browser, 'job-not-found');
    browser.problems.splice(0); // the 404 the page shows

    await page.goto(`${api.url}/dashboard/jobs`);
    await page.getByText('No sdr2hdr jobs yet').waitFor();
    expect(await page.content()).not.toContain(job.body.job_id);
  });

  it('signing out ends the session; signing out everywhere ends the member’s other browsers too', async () => {
    const owner = await newOwner('Sign-out Co');
    const first = await browserSignedIn(owner.email);
    const second = await browserSignedIn(owner.email);

    await first.page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await first.page.getByText('You are signed out.').waitFor();
    await checkPage(first, 'signed-out');

    // The other browser finds its session over at its next request.
    await second.page.getByRole('link', { name: 'API keys' }).click();
    await second.page.getByText('Your session has ended. Sign in again.').waitFor();
    expect(second.page.url()).toBe(`${api.url}/dashboard/login?ended=1&next=%2Fkeys`);
    second.problems.splice(0); // the 401 that ended it

    // Signing in again lands where the member was going.
    await second.page.getByLabel('Email').fill(owner.email);
    await second.page.getByLabel('Password').fill(PASSWORD);
    await second.page.getByRole('button', { name: 'Sign in' }).click();
    await second.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();

    await second.page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await second.page.getByText('You are signed out.').waitFor();
    await second.page.goto(`${api.url}/dashboard/keys`);
    await second.page.getByRole('heading', { level: 1, name: 'Sign in to mediajobs' }).waitFor();
  });

  it('forgot password: the page answers the same for anyone and the member gets the link by mail', async () => {
    const owner = await newOwner('Forgetful Co');
    const browser = await openBrowser();
    browsers.push(browser);
    const page = browser.page;
    await page.goto(`${api.url}/dashboard/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
    await checkPage(browser, 'forgot-password');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText('If this email belongs to a member, a reset link is on its way.').waitFor();
    await checkPage(browser, 'forgot-password-sent');
    const link = linkIn(await smtp.waitForMail(owner.email, /Reset your mediajobs password/));
    await page.goto(link);
    await page.getByText('Choose a new password. You will be signed out everywhere else.').waitFor();
    await page.getByLabel('New password').fill('another long passphrase');
    await page.getByLabel('Repeat the password').fill('another long passphrase');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    // The link worked once.
    await page.goto(link);
    await page.getByText('This link does not work').waitFor();
    await checkPage(browser, 'set-password-used-link');
    browser.problems.splice(0); // the 400 the page shows
  });
});
