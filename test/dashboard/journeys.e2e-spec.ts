// The dashboard in a real browser against the real API, worker, PostgreSQL, Redis and ffmpeg: what
// an owner does from the invitation mail to revoking a key, running a job from an upload, reading a
// failed job, testing a webhook endpoint and freeing a licence seat. Every page is screenshot
// (screenshots/dashboard/) and checked with axe-core.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMediainfoHdr } from '../../src/media/mediainfo';
import { encryptedMp4, sdrMp4 } from '../fixtures/media';
import { call, type TestApi } from '../support/app';
import { startStack } from '../support/worker';
import { startReceiver, verify, type Receiver } from '../support/webhook-receiver';
import { activate, validate } from '../support/licenses';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { linkIn, startSmtp, type TestSmtp } from './mail';
import { PASSWORD, uniqueEmail } from '../support/dashboard-session';

const REGION = 'dashboard';

describe('the dashboard in a browser', () => {
  let smtp: TestSmtp;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let browser: DashboardBrowser;
  let owner: { email: string; accountId: string };
  let receiver: Receiver | undefined;

  beforeAll(async () => {
    smtp = await startSmtp();
    stack = await startStack({
      REGION,
      SMTP_URL: smtp.url,
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-dashboard-')),
      // One attempt: a receiver's failure shows at once as a failed delivery.
      WEBHOOK_RETRY_SCHEDULE: '0',
    });
    api = stack.api;
    browser = await openBrowser();
  });

  afterAll(async () => {
    await receiver?.stop();
    await browser?.close();
    await stack?.close();
    await smtp?.close();
  });

  afterEach(() => {
    // No console error, CSP refusal or failed request in any journey.
    expect(browser.problems.splice(0)).toEqual([]);
  });

  const page = () => browser.page;
  const heading = (name: string) => page().getByRole('heading', { level: 1, name });

  it('an owner signs in from the emailed link, creates a key (shown once), uses it, revokes it, and the key is dead', async () => {
    const email = uniqueEmail('owner');
    const created = await call(api, 'POST', '/v1/admin/accounts', {
      admin: true,
      body: { name: 'Acme Studios', plan: 'pro', owner_email: email },
    });
    owner = { email, accountId: created.body.account.id };
    await call(api, 'POST', `/v1/admin/accounts/${owner.accountId}/credits`, {
      admin: true,
      body: { credits: 5000, reason: 'dashboard test' },
    });
    const link = linkIn(await smtp.waitForMail(email, /invited to Acme Studios/));

    await page().goto(link);
    await page().getByText('You are joining Acme Studios as owner').waitFor();
    await checkPage(browser, 'set-password');
    await page().getByLabel('New password').fill(PASSWORD);
    await page().getByLabel('Repeat the password').fill(PASSWORD);
    await page().getByRole('button', { name: 'Set password and sign in' }).click();
    await heading('Overview').waitFor();
    // The token left the address bar with the page it opened.
    expect(page().url()).toBe(`${api.url}/dashboard/`);
    await page().getByText('5,000').first().waitFor();
    await checkPage(browser, 'overview');

    await page().getByRole('link', { name: 'API keys' }).click();
    await heading('API keys').waitFor();
    await page().getByRole('button', { name: 'Create key' }).click();
    const secret = page().getByLabel('Your new API key');
    await secret.waitFor();
    const key = await secret.inputValue();
    expect(key).toMatch(/^mjk_[0-9A-Za-z]{40}$/);
    await page().getByRole('button', { name: 'Copy' }).click();
    await page().getByText('Copied.').waitFor();
    await checkPage(browser, 'api-keys-created');

    // Curl-equivalent: the key works from anywhere.
    const before = await fetch(`${api.url}/v1/account/credits`, { headers: { 'x-api-key': key } });
    expect(before.status).toBe(200);

    // Once dismissed, the key is never shown again: only its prefix.
    await page().getByRole('button', { name: 'I have copied it' }).click();
    await page().reload();
    await heading('API keys').waitFor();
    expect(await page().content()).not.toContain(key);

    const prefix = key.slice(0, 12);
    await page()
      .getByRole('button', { name: `Revoke key ${prefix}` })
      .click();
    const dialog = page().getByRole('dialog', { name: `Revoke key ${prefix}…?` });
    await dialog.waitFor();
    await checkPage(browser, 'api-keys-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page().getByRole('row').filter({ hasText: prefix }).getByText('Revoked').waitFor();
    await checkPage(browser, 'api-keys');

    const after = await fetch(`${api.url}/v1/account/credits`, { headers: { 'x-api-key': key } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe('revoked_api_key');
  });

  it('a clip dropped on New job uploads with a byte progress bar, shows its price, runs with a moving progress bar and downloads as HDR10', async () => {
    const clip = await sdrMp4({ width: 640, height: 360, seconds: 8, fps: 30 });
    await page().getByRole('link', { name: 'New job' }).first().click();
    await heading('New job').waitFor();
    await checkPage(browser, 'new-job');

    // Drag and drop, as a person would: a drop event carrying the file.
    const bytes = (await readFile(clip)).toString('base64');
    const transfer = await page().evaluateHandle((base64) => {
      // In the page (no DOM types in the tests' TypeScript program).
      const scope = globalThis as any;
      const data = Uint8Array.from(scope.atob(base64) as string, (char) => char.charCodeAt(0));
      const dataTransfer = new scope.DataTransfer();
      dataTransfer.items.add(new scope.File([data], 'clip.mp4', { type: 'video/mp4' }));
      return dataTransfer;
    }, bytes);
    const estimateResponse = page().waitForResponse((response) => response.url().endsWith('/v1/sdr2hdr/jobs/estimate'));
    await page().locator('.dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    const uploaded = page().getByText(/^Uploaded clip\.mp4/);
    await uploaded.waitFor();
    const uploadBar = page().getByRole('progressbar', { name: 'Upload' });
    expect(await uploadBar.getAttribute('value')).toBe(await uploadBar.getAttribute('max'));

    // The price comes from POST /v1/sdr2hdr/jobs/estimate with the very body the submit will send,
    // and the page shows what that answered.
    const estimate = await estimateResponse;
    const estimateRequest = JSON.parse(estimate.request().postData() ?? '{}');
    expect(estimateRequest).toMatchObject({ inputs: [{ upload_id: expect.stringMatching(/^upl_/) }] });
    expect(estimate.status()).toBe(200);
    const answer = (await estimate.json()) as {
      estimated_credits: number;
      estimated_usd: number;
      estimated_seconds: number;
      accepted: boolean;
    };
    // 8 s of 640×360: 1 credit a second (up to 720p); pro's 0.006 USD a credit; seconds from measured speeds.
    expect(answer).toMatchObject({ estimated_credits: 8, estimated_usd: 0.05, accepted: true });
    const price = page().locator('.estimate');
    await price.getByText('8 credits ($0.05) for 8 s of media').waitFor();
    await price.getByText(`Processing takes about ${answer.estimated_seconds} s once a worker starts it.`).waitFor();
    await checkPage(browser, 'new-job-uploaded');

    // Every value the job's progress bar shows, recorded in the page from before the job starts.
    await page().evaluate(() => {
      const scope = globalThis as any;
      const seen: number[] = [];
      scope.progressSeen = seen;
      const record = () => {
        const bar = scope.document.querySelector('progress[aria-label="Job progress"]');
        const value = bar ? Number(bar.getAttribute('value')) : NaN;
        if (!Number.isNaN(value) && seen[seen.length - 1] !== value) seen.push(value);
      };
      new scope.MutationObserver(record).observe(scope.document.body, {
        subtree: true,
        childList: true,
        attributes: true,
      });
    });
    // The speed/quality choice travels in the submit's body (same price whichever is picked).
    await page().getByLabel('Quality (same price)').selectOption('fast');
    const submit = page().waitForRequest(
      (request) => request.method() === 'POST' && request.url().endsWith('/v1/sdr2hdr/jobs'),
    );
    await page().getByRole('button', { name: 'Start job' }).click();
    expect(JSON.parse((await submit).postData() ?? '{}').output).toMatchObject({ quality: 'fast' });
    await page()
      .getByRole('heading', { level: 1, name: /^Job job_/ })
      .waitFor();
    await page().getByRole('progressbar', { name: 'Job progress' }).waitFor();
    await checkPage(browser, 'job-running');
    await page()
      .getByRole('heading', { name: 'Status: Succeeded' })
      .waitFor({ timeout: 120_000 })
      .catch(async (error: unknown) => {
        throw new Error(`the job did not succeed: ${String(error)}\n${await page().locator('main').innerText()}`);
      });
    const seen: number[] = await page().evaluate(() => (globalThis as any).progressSeen);
    // The bar moved: at least one value strictly between 0 and 100 on the way to 100.
    expect(seen.some((value) => value > 0 && value < 100)).toBe(true);
    expect(seen[seen.length - 1]).toBe(100);
    await checkPage(browser, 'job-succeeded');

    const download = page().getByRole('link', { name: /^Download MP4/ });
    const href = await download.getAttribute('href');
    const file = join(await mkdtemp(join(tmpdir(), 'mj-dashboard-download-')), 'out.mp4');
    await writeFile(file, Buffer.from(await (await fetch(href!)).arrayBuffer()));
    const hdr = await readMediainfoHdr(file);
    expect(hdr).toMatchObject({ isHdr10: true, transfer: 'PQ' });

    // The overview's chart now has today's charge, from the ledger.
    const charged = Number((await page().locator('dt:text-is("Charged") + dd').innerText()).split(' ')[0]);
    const total = `${charged} credit${charged === 1 ? '' : 's'} in total`;
    expect(charged).toBeGreaterThan(0);
    await page().getByRole('link', { name: 'Overview' }).click();
    await heading('Overview').waitFor();
    await page().locator('figcaption').getByText(total, { exact: false }).waitFor();
    await checkPage(browser, 'overview-with-charges');
  });

  it('a failed job shows its error envelope in words, its code and a link to the reference; it is not charged', async () => {
    const encrypted = await encryptedMp4();
    await page().getByRole('link', { name: 'New job' }).first().click();
    await heading('New job').waitFor();
    // Chosen under a name of its own: the fixture's file is named after its recipe's hash.
    await page()
      .getByLabel(/or choose one/)
      .setInputFiles({ name: 'cenc.mp4', mimeType: 'video/mp4', buffer: await readFile(encrypted) });
    await page()
      .getByText(/^Uploaded cenc\.mp4/)
      .waitFor();
    await page().getByRole('button', { name: 'Start job' }).click();
    await page().getByRole('heading', { name: 'Status: Failed' }).waitFor({ timeout: 120_000 });
    await page().getByRole('heading', { name: 'Why it failed' }).waitFor();
    // The page says what the job view says.
    const jobId = page().url().split('/').pop()!;
    const view = await call(api, 'GET', `/v1/sdr2hdr/jobs/${jobId}`, { headers: { cookie: await cookieHeader() } });
    expect(view.body.error).toMatchObject({
      code: 'drm_protected',
      doc_url: `${api.config.docsUrl}/errors.html#drm_protected`,
    });
    const notice = page().getByRole('alert').filter({ hasText: 'drm_protected' });
    await notice.getByText(view.body.error.message).waitFor();
    await notice.getByText(view.body.error.request_id).waitFor();
    const reference = notice.getByRole('link', { name: 'What drm_protected means' });
    expect(await reference.getAttribute('href')).toBe(`${api.config.docsUrl}/errors.html#drm_protected`);
    await page().getByText('Released: nothing charged').waitFor();
    await checkPage(browser, 'job-failed');

    // The job list, filtered to failed jobs, has it; the audio list is empty and says what to do.
    await page().getByRole('link', { name: 'Jobs', exact: true }).click();
    await heading('Jobs').waitFor();
    await page().getByLabel('Status').selectOption('failed');
    await page().getByRole('row').filter({ hasText: 'Failed' }).first().waitFor();
    expect(await page().getByRole('row').filter({ hasText: 'Succeeded' }).count()).toBe(0);
    await checkPage(browser, 'jobs-failed');
    await page().getByLabel('Status').selectOption('');
    await page().getByRole('row').filter({ hasText: 'Succeeded' }).first().waitFor();
    await checkPage(browser, 'jobs');
    await page().getByRole('button', { name: 'Speech loudness' }).click();
    await page().getByText('No audio jobs yet').waitFor();
    await checkPage(browser, 'jobs-empty');
  });

  it('a webhook endpoint shows a failed then a successful delivery of a test event, and Redeliver sends it again', async () => {
    receiver = await startReceiver({ status: 500 });
    await page().getByRole('link', { name: 'Webhooks' }).click();
    await heading('Webhooks').waitFor();
    await page().getByText('No webhook endpoints yet').waitFor();
    await checkPage(browser, 'webhooks-empty');

    await page().getByLabel('Endpoint URL').fill(receiver.url());
    await page().getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page().getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await checkPage(browser, 'webhooks-created');
    await page().getByRole('button', { name: 'Open the endpoint' }).click();
    await heading('Webhook endpoint').waitFor();
    await page().getByText('Nothing delivered yet').waitFor();

    await page().getByRole('button', { name: 'Send test event' }).click();
    const failed = page().getByRole('row').filter({ hasText: 'webhook.test' }).filter({ hasText: 'Failed' });
    await failed.getByText(/· 500 · \d+ ms · The endpoint answered HTTP 500\./).waitFor();

    // The receiver is fixed (it now answers 200); Redeliver sends the same event again.
    await failed.getByRole('button', { name: /^Redeliver webhook\.test/ }).click();
    const delivered = page().getByRole('row').filter({ hasText: '(redelivery)' }).filter({ hasText: 'Delivered' });
    await delivered.getByText(/· 200 · \d+ ms/).waitFor();
    await checkPage(browser, 'webhook-endpoint');

    // Both attempts reached the receiver signed with the secret shown once, under one webhook-id.
    const [first, second] = await receiver.waitFor(2);
    const event = verify(secret, first);
    expect(event).toMatchObject({ event: 'webhook.test', data: { job: null, error: null } });
    expect(verify(secret, second).id).toBe(event.id);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
  });

  it("a licence's devices are listed with name and last seen; deactivating one frees its seat", async () => {
    const issued = await call(api, 'POST', '/v1/admin/licenses', {
      admin: true,
      body: {
        account_id: owner.accountId,
        max_devices: 2,
        expires_at: new Date(Date.now() + 30 * 86400_000).toISOString(),
      },
    });
    const key: string = issued.body.license_key;
    await page().getByRole('link', { name: 'Licences' }).click();
    await heading('Licences').waitFor();
    await page().getByText('No device is activated').waitFor();
    await checkPage(browser, 'licenses-empty');

    expect((await activate(api, key, 'studio-1', 'Studio workstation')).status).toBe(200);
    expect((await activate(api, key, 'laptop-7', 'Road laptop')).status).toBe(200);
    const third = await activate(api, key, 'render-3', 'Render node');
    expect(third.body.error.code).toBe('activation_limit_reached');

    await page().reload();
    await heading('Licences').waitFor();
    await page().getByText('2 of 2 in use').waitFor();
    const studio = page().getByRole('row').filter({ hasText: 'Studio workstation' });
    await studio.getByText('studio-1').waitFor();
    await checkPage(browser, 'licenses');
    await studio.getByRole('button', { name: 'Deactivate Studio workstation' }).click();
    const dialog = page().getByRole('dialog', { name: 'Deactivate Studio workstation?' });
    await dialog.getByRole('button', { name: 'Deactivate device' }).click();
    await page().getByText('1 of 2 in use').waitFor();
    await page().getByText('Studio workstation is deactivated').waitFor();
    expect(await page().getByRole('row').filter({ hasText: 'Studio workstation' }).count()).toBe(0);

    // The seat is free for another machine; the deactivated one is no longer activated.
    expect((await activate(api, key, 'render-3', 'Render node')).status).toBe(200);
    expect((await validate(api, key, 'studio-1')).body.error.code).toBe('device_not_activated');
  });

  it('an owner sets the spend cap and invites a member, whose mail leads to the dashboard', async () => {
    await page().getByRole('link', { name: 'Settings' }).click();
    await heading('Settings').waitFor();
    await page().getByLabel('Cap in USD per month').fill('25');
    await page().getByRole('button', { name: 'Save cap' }).click();
    await page().getByText('The spend cap is now $25.00 a month.').waitFor();
    const credits = await call(api, 'GET', '/v1/account/credits', {
      headers: { cookie: await cookieHeader() },
    });
    expect(credits.body.spend_limit_usd).toBe(25);

    const email = uniqueEmail('developer');
    await page().getByLabel('Email').fill(email);
    await page().getByLabel('developer').check();
    await page().getByRole('button', { name: 'Send invitation', exact: true }).click();
    await page().getByText(`Invitation for ${email} (developer) created`).waitFor();
    await page().getByRole('row').filter({ hasText: email }).getByText('Invited').waitFor();
    await checkPage(browser, 'settings');
    const mail = await smtp.waitForMail(email, /invited to Acme Studios/);
    expect(linkIn(mail)).toBe(await page().getByLabel('Invitation link').inputValue());
  });

  async function cookieHeader(): Promise<string> {
    const cookies = await browser.context.cookies(api.url);
    return cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
  }
});
