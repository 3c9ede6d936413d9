// What a careful user notices on the dashboard, in Chromium against the real API and worker: a key in
// its rotation grace period can be revoked at once; each ending of a job reads and looks its own way
// (cancelled is not a red failure, a source host's failure is not "Check the request"); the cancel
// dialog's buttons say what they do; and the small things — a dropped file shows in the file input,
// a wide webhook URL field, a padded invitation panel, Actions cells aligned with their row, a
// warning for a spend cap below this month's charges, expiry times that say 00:00 UTC.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptedMp4, sdrMp4 } from '../fixtures/media';
import { call, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { startStack } from '../support/worker';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { ownerAccount, signInWithBrowser, type SeededAccount } from './seed';
import { asMember, uniqueEmail } from '../support/dashboard-session';

type Rgb = string;

describe('dashboard details a careful user notices', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let origin: MediaOrigin;
  let browser: DashboardBrowser;
  let account: SeededAccount;

  beforeAll(async () => {
    origin = await startMediaOrigin();
    stack = await startStack({ REGION: 'details', STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-details-')) });
    api = stack.api;
    account = await ownerAccount(api, { credits: 5000 });
    browser = await openBrowser();
    await signInWithBrowser(browser, api, account.email);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await origin?.close();
  });

  afterEach(() => {
    expect(browser.problems.splice(0)).toEqual([]);
  });

  const page = () => browser.page;
  const heading = (name: string | RegExp) => page().getByRole('heading', { level: 1, name });
  const key = () => account.apiKey;

  async function submit(body: object): Promise<string> {
    const response = await call(api, 'POST', '/v1/sdr2hdr/jobs', { key: key(), body });
    expect(response.status).toBe(202);
    return response.body.job_id;
  }

  async function openJob(jobId: string): Promise<void> {
    await page().goto(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
    await heading(`Job ${jobId}`).waitFor();
  }

  /** The notice under "Why …": its title, role, tone class and background colour. */
  async function endingNotice(): Promise<{ title: string; role: string; tone: string; background: Rgb }> {
    const notice = page().locator('section[aria-labelledby="error-heading"] .notice');
    await notice.waitFor();
    return notice.evaluate((element: any) => ({
      title: element.querySelector('.notice-title').textContent,
      role: element.getAttribute('role'),
      tone: [...element.classList].find((name: string) => name !== 'notice'),
      background: (globalThis as any).getComputedStyle(element).backgroundColor,
    }));
  }

  it('a key in its rotation grace period has a Revoke now button, and revoking it kills the key at once', async () => {
    const created = await call(api, 'POST', '/v1/account/api-keys', { key: key(), body: { scopes: ['account'] } });
    const rotated = await call(api, 'POST', `/v1/account/api-keys/${created.body.id}/rotate`, {
      key: key(),
      body: { grace_seconds: 86400 },
    });
    expect(rotated.status).toBe(201);
    // In its grace period the old key still works.
    expect((await call(api, 'GET', '/v1/account/credits', { key: created.body.key })).status).toBe(200);

    await page().goto(`${api.url}/dashboard/keys`);
    await heading('API keys').waitFor();
    const row = page().getByRole('row').filter({ hasText: created.body.prefix });
    await row.getByText(/until \d+ \w+ \d{4}/).waitFor();
    expect(await row.getByRole('button', { name: /^Rotate/ }).count()).toBe(0);
    await row.getByRole('button', { name: `Revoke now key ${created.body.prefix}` }).click();
    const dialog = page().getByRole('dialog', { name: `Revoke key ${created.body.prefix}…?` });
    await dialog.getByText('instead of from').waitFor();
    expect(await dialog.getByRole('button').allInnerTexts()).toEqual(['Keep key', 'Revoke key']);
    await checkPage(browser, 'details-revoke-in-grace');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('Revoked').waitFor();

    const after = await call(api, 'GET', '/v1/account/credits', { key: created.body.key });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('revoked_api_key');
  });

  it('cancelling a job: the dialog offers "Keep job" or "Cancel job", and the cancelled job reads as cancelled, in grey, not as a red failure', async () => {
    origin.serve('slow.mp4', await sdrMp4({ width: 320, height: 180, seconds: 2 }));
    const jobId = await submit({ inputs: [{ source_url: origin.url('slow.mp4') }] });
    // The worker's download now waits: the job stays running until it is cancelled.
    origin.delay('slow.mp4', 20_000);
    await openJob(jobId);
    await page().getByRole('button', { name: 'Cancel job' }).click();
    const dialog = page().getByRole('dialog', { name: 'Cancel this job?' });
    await dialog.waitFor();
    expect(await dialog.getByRole('button').allInnerTexts()).toEqual(['Keep job', 'Cancel job']);
    await checkPage(browser, 'details-cancel-dialog');
    await dialog.getByRole('button', { name: 'Keep job' }).click();
    await dialog.waitFor({ state: 'hidden' });

    await page().getByRole('button', { name: 'Cancel job' }).click();
    await dialog.getByRole('button', { name: 'Cancel job' }).click();
    await page().getByRole('heading', { name: 'Status: Cancelled' }).waitFor({ timeout: 30_000 });
    await page().getByRole('heading', { name: 'Why it stopped' }).waitFor();
    const notice = await endingNotice();
    expect(notice).toEqual({
      title: 'Cancelled',
      role: 'status',
      tone: 'notice-neutral',
      background: notice.background,
    });
    expect(await page().getByText('Processing failed').count()).toBe(0);
    await checkPage(browser, 'details-job-cancelled');
    cancelledBackground = notice.background;
  });
  let cancelledBackground: Rgb;

  it('a job cancelled after an input was delivered shows that input charged: settled, not refunded', async () => {
    const short = await upload(api, key(), await sdrMp4({ width: 160, height: 90, seconds: 2, audio: false }));
    origin.serve('held-after-one.mp4', await sdrMp4({ width: 160, height: 90, seconds: 2, audio: false }));
    const jobId = await submit({ inputs: [{ upload_id: short }, { source_url: origin.url('held-after-one.mp4') }] });
    // The worker takes the inputs in order: the first is delivered, the second's download then waits.
    origin.delay('held-after-one.mp4', 30_000);
    const path = `/v1/sdr2hdr/jobs/${jobId}`;
    const deadline = Date.now() + 25_000;
    while ((await call(api, 'GET', path, { key: key() })).body.items[0].status !== 'succeeded') {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const cancelled = await call(api, 'POST', `${path}/cancel`, { key: key() });
    expect(cancelled.body.billing).toMatchObject({ state: 'settled', refunded: false });
    const charged = cancelled.body.billing.charged_credits as number;
    expect(charged).toBeGreaterThan(0);

    await openJob(jobId);
    const billing = page().locator('section[aria-labelledby="billing-heading"]');
    await billing.getByText('Settled: charged for the outputs delivered before the cancel').waitFor();
    const facts = await billing.locator('dd').allInnerTexts();
    expect(facts[1]).toBe(`${charged} credit${charged === 1 ? '' : 's'}`);
    expect(facts[3]).toBe('No');
  });

  it('a source host failing during the download reads as a host failure worth retrying, not as "Check the request"', async () => {
    origin.serve('flaky.mp4', await sdrMp4({ width: 160, height: 90 }));
    const jobId = await submit({ inputs: [{ source_url: origin.url('flaky.mp4') }] });
    origin.failWith('flaky.mp4', 503);
    const job = await waitForJob(api, key(), `/v1/sdr2hdr/jobs/${jobId}`);
    expect(job.error).toMatchObject({ code: 'upstream_error', type: 'processing_error', retryable: true });

    await openJob(jobId);
    await page().getByRole('heading', { name: 'Why it failed' }).waitFor();
    const notice = await endingNotice();
    expect(notice).toMatchObject({ title: 'A source or storage host failed', role: 'alert', tone: 'notice-outage' });
    expect(await page().getByText('Check the request').count()).toBe(0);
    await page().getByText('This can work if you try again.').waitFor();
    await checkPage(browser, 'details-job-upstream-error');
    hostFailureBackground = notice.background;
  });
  let hostFailureBackground: Rgb;

  it('a job whose media cannot be processed reads "Processing failed" in red: three endings, three colours', async () => {
    const jobId = await submit({ inputs: [{ upload_id: await upload(api, key(), await encryptedMp4()) }] });
    await waitForJob(api, key(), `/v1/sdr2hdr/jobs/${jobId}`);
    await openJob(jobId);
    const notice = await endingNotice();
    expect(notice).toMatchObject({ title: 'Processing failed', role: 'alert', tone: 'notice-danger' });
    expect(new Set([notice.background, cancelledBackground, hostFailureBackground]).size).toBe(3);
    // Not retryable (drm_protected): no promise that trying again helps.
    expect(await page().getByText('This can work if you try again.').count()).toBe(0);
  });

  it('the job page’s tab is titled with the job, not only "mediajobs dashboard"', async () => {
    const jobId = await submit({ inputs: [{ upload_id: await upload(api, key(), await encryptedMp4()) }] });
    await openJob(jobId);
    await page().waitForFunction((id: string) => (globalThis as any).document.title.startsWith(`Job ${id}`), jobId);
    expect(await page().title()).toBe(`Job ${jobId} · mediajobs dashboard`);
  });

  it('a file dropped on New job shows in the file input (not "No file chosen")', async () => {
    const clip = await sdrMp4({ width: 320, height: 180, seconds: 1 });
    await page().goto(`${api.url}/dashboard/jobs/new`);
    await heading('New job').waitFor();
    const bytes = (await readFile(clip)).toString('base64');
    const transfer = await page().evaluateHandle((base64) => {
      const scope = globalThis as any;
      const data = Uint8Array.from(scope.atob(base64) as string, (char) => char.charCodeAt(0));
      const dataTransfer = new scope.DataTransfer();
      dataTransfer.items.add(new scope.File([data], 'dropped.mp4', { type: 'video/mp4' }));
      return dataTransfer;
    }, bytes);
    await page().locator('.dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    await page()
      .getByText(/^Uploaded dropped\.mp4/)
      .waitFor();
    const chosen = await page()
      .getByLabel(/or choose one/)
      .evaluate((input: any) => [...input.files].map((file: any) => file.name));
    expect(chosen).toEqual(['dropped.mp4']);
  });

  it('New job says 2160p from a smaller source is not upscaled — beside the choice, in the estimate, and on the job', async () => {
    await page().goto(`${api.url}/dashboard/jobs/new`);
    await heading('New job').waitFor();
    await page()
      .getByLabel(/or choose one/)
      .setInputFiles(await sdrMp4({ width: 320, height: 180, seconds: 1 }));
    await page()
      .getByText(/^Uploaded /)
      .waitFor();
    const resolution = page().getByLabel('Resolution');
    expect(await resolution.getAttribute('aria-describedby')).toBe('resolution-hint');
    await page().getByText('Never upscaled: a smaller source keeps its own size, and is priced for it.').waitFor();
    const estimated = page().waitForResponse((response) => response.url().endsWith('/v1/sdr2hdr/jobs/estimate'));
    await resolution.selectOption('2160p');
    const answer = (await (await estimated).json()) as { items: { output_width: number; output_height: number }[] };
    expect(answer.items[0]).toMatchObject({ output_width: 320, output_height: 180 });
    await page()
      .locator('.estimate')
      .getByText(
        'Output 320×180 — the source is 320×180, smaller than 2160p: it keeps its size (never upscaled) and is priced for it.',
      )
      .waitFor();
    // Priced as what it produces: 1 s at up to 720p.
    await page()
      .locator('.estimate')
      .getByText(/^1 credit \(/)
      .waitFor();
    await checkPage(browser, 'details-new-job-not-upscaled');
    await page().getByRole('button', { name: 'Start job' }).click();
    await heading(/^Job job_/).waitFor();
    await page().getByRole('cell', { name: '320×180 → 320×180' }).waitFor();
  });

  it('the webhook URL field is wide enough for a real URL', async () => {
    await page().goto(`${api.url}/dashboard/webhooks`);
    await heading('Webhooks').waitFor();
    const field = await page().getByLabel('Endpoint URL').boundingBox();
    const form = await page().locator('form.card').boundingBox();
    // At 1280 px: at least 40 characters of a URL are visible (before: 12rem, 180 px).
    expect(field!.width).toBeGreaterThanOrEqual(Math.min(560, form!.width - 60));
  });

  it('a refused webhook endpoint URL reads "The URL was refused", not as a source that could not be read', async () => {
    await page().goto(`${api.url}/dashboard/webhooks`);
    await heading('Webhooks').waitFor();
    // A private address: refused by its literal, before anything is connected to.
    await page().getByLabel('Endpoint URL').fill('https://10.1.2.3/hooks');
    await page().getByRole('button', { name: 'Add endpoint' }).click();
    const notice = page().locator('.notice[role="alert"]');
    await notice.waitFor();
    expect(await notice.locator('.notice-title').textContent()).toBe('The URL was refused');
    expect(await notice.textContent()).toContain('invalid_url');
  });

  it('API keys: every cell of a row, Actions included, is a table cell ending where its row ends', async () => {
    await page().goto(`${api.url}/dashboard/keys`);
    await heading('API keys').waitFor();
    await page().locator('tbody tr').first().waitFor();
    const rows = await page()
      .locator('tbody tr')
      .evaluateAll((trs: any[]) =>
        trs.map((tr) => {
          const rowBottom = Math.round(tr.getBoundingClientRect().bottom);
          return [...tr.children].map((td: any) => ({
            display: (globalThis as any).getComputedStyle(td).display,
            bottom: Math.round(td.getBoundingClientRect().bottom) - rowBottom,
          }));
        }),
      );
    expect(rows.length).toBeGreaterThan(0);
    for (const cells of rows) for (const cell of cells) expect(cell).toEqual({ display: 'table-cell', bottom: 0 });
  });

  it('the only owner is offered no Remove (nor another role) and is told why; with a second owner, Remove is back', async () => {
    await page().goto(`${api.url}/dashboard/settings`);
    await heading('Settings').waitFor();
    const row = page().locator('tr', { hasText: account.email });
    await row.getByText('The only owner: make another member owner to remove or demote them.').waitFor();
    expect(
      await page()
        .getByRole('button', { name: `Remove ${account.email}` })
        .count(),
    ).toBe(0);
    expect(await page().getByLabel(`Role of ${account.email}`).isDisabled()).toBe(true);

    await page().getByLabel('Email', { exact: true }).fill(uniqueEmail('co-owner'));
    await page().locator('#invite-role-owner').check();
    await page().getByRole('button', { name: 'Send invitation', exact: true }).click();
    await page()
      .getByRole('button', { name: `Remove ${account.email}` })
      .waitFor();
    expect(await page().getByLabel(`Role of ${account.email}`).isDisabled()).toBe(false);
    expect(await row.getByText('The only owner').count()).toBe(0);
  });

  it('the invitation link panel is padded like every other card', async () => {
    await page().goto(`${api.url}/dashboard/settings`);
    await heading('Settings').waitFor();
    await page().getByLabel('Email', { exact: true }).fill(uniqueEmail('viewer'));
    await page().getByLabel('viewer').check();
    await page().getByRole('button', { name: 'Send invitation', exact: true }).click();
    const link = page().getByLabel('Invitation link');
    await link.waitFor();
    // The panel is the nearest framed box (a border or a ring) around the link: its content keeps off the frame.
    const padding = await link.evaluate((input: any) => {
      const style = (element: any) => (globalThis as any).getComputedStyle(element);
      const framed = (element: any) =>
        parseFloat(style(element).borderLeftWidth) > 0 || style(element).boxShadow !== 'none';
      let panel = input.parentElement;
      while (panel && !framed(panel)) panel = panel.parentElement;
      return parseFloat(style(panel).paddingLeft);
    });
    expect(padding).toBeGreaterThanOrEqual(16);
  });

  it('a spend cap below what this month already charged is warned about, saying new jobs get spend_limit_exceeded', async () => {
    // Something charged this month.
    const jobId = await submit({
      inputs: [{ upload_id: await upload(api, key(), await sdrMp4({ width: 320, height: 180, seconds: 2 })) }],
    });
    expect((await waitForJob(api, key(), `/v1/sdr2hdr/jobs/${jobId}`)).status).toBe('succeeded');
    const credits = (await call(api, 'GET', '/v1/account/credits', { key: key() })).body;
    expect(credits.spent_usd).toBeGreaterThan(0);

    await page().goto(`${api.url}/dashboard/settings`);
    await heading('Settings').waitFor();
    await page().getByLabel('Cap in USD per month').fill('0');
    const warning = page().getByRole('status').filter({ hasText: 'more than a cap of $0.00' });
    await warning.getByText('spend_limit_exceeded').waitFor();
    await warning.getByText(/until the month resets on \d+ \w+ \d{4}, 00:00 UTC/).waitFor();
    await page().getByRole('button', { name: 'Save cap' }).click();
    await page().getByText('The spend cap is now $0.00 a month.').waitFor();
    await warning.waitFor();
    await checkPage(browser, 'details-spend-cap-warning');

    // What the warning said happens: the next submit is refused.
    const refused = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: key(),
      body: { inputs: [{ upload_id: await upload(api, key(), await sdrMp4({ width: 160, height: 90 })) }] },
    });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('spend_limit_exceeded');
    await asMember(api, account.session, 'PATCH', '/v1/account', { body: { spend_limit_usd: null } });
  });

  it('a key expiry date says it means 00:00 UTC of that day, before and after the key is created', async () => {
    await page().goto(`${api.url}/dashboard/keys`);
    await heading('API keys').waitFor();
    await page().getByLabel('Expires (optional)').fill('2030-12-31');
    await page()
      .getByText('The key stops working at 31 Dec 2030, 00:00 UTC: the start of that day, not its end.')
      .waitFor();
    await page().getByRole('button', { name: 'Create key' }).click();
    const secret = await page().getByLabel('Your new API key').inputValue();
    const row = page()
      .getByRole('row')
      .filter({ hasText: secret.slice(0, 12) });
    await row.getByText('31 Dec 2030, 00:00 UTC').waitFor();
    const listed = await call(api, 'GET', '/v1/account/api-keys', { key: key() });
    const created = listed.body.data.find((entry: { prefix: string }) => secret.startsWith(entry.prefix));
    expect(created.expires_at).toBe('2030-12-31T00:00:00.000Z');
  });
});
