// The Billing page in Chromium against the real API and worker: where credits come from (the
// operator's top-up page, also offered where a job is refused for insufficient_credits), spend per
// month against the cap, and the ledger — filtered by kind and dates, a page at a time, and exported
// as a CSV file holding everything the filter keeps.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { ownerAccount, signInWithBrowser, type SeededAccount } from './seed';
import { asMember } from '../support/dashboard-session';

const TOPUP = 'https://billing.mediajobs.example/topup';
const GRANTS = 30;

describe('the Billing page', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let browser: DashboardBrowser;
  let account: SeededAccount;

  beforeAll(async () => {
    stack = await startStack({
      REGION: 'billing',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-billing-')),
      BILLING_TOPUP_URL: TOPUP,
    });
    api = stack.api;
    account = await ownerAccount(api);
    browser = await openBrowser();
    await signInWithBrowser(browser, api, account.email);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  afterEach(() => {
    expect(browser.problems.splice(0)).toEqual([]);
  });

  const page = () => browser.page;
  const heading = (name: string) => page().getByRole('heading', { level: 1, name });

  it('with no credits, New job says billing stopped it and offers the top-up page', async () => {
    await page().goto(`${api.url}/dashboard/jobs/new`);
    await heading('New job').waitFor();
    await page()
      .getByLabel(/or choose one/)
      .setInputFiles(await sdrMp4({ width: 320, height: 180, seconds: 1 }));
    const refused = page().getByRole('alert').filter({ hasText: 'insufficient_credits' });
    await refused.getByText('This job would be refused now').waitFor();
    await refused.getByText(`Buy credits at ${TOPUP}, or submit a shorter job.`, { exact: false }).waitFor();
    expect(await refused.getByRole('link', { name: 'Buy credits' }).getAttribute('href')).toBe(TOPUP);
    // A billing refusal reads as money to sort out (amber), not as a broken request (red).
    expect(await refused.getAttribute('class')).toBe('notice notice-warning');
    await checkPage(browser, 'billing-insufficient-credits');
  });

  it('shows the balance, where to buy credits, and this month’s spend against the cap', async () => {
    for (let n = 0; n < GRANTS; n++) {
      await call(api, 'POST', `/v1/admin/accounts/${account.accountId}/credits`, {
        admin: true,
        body: { credits: 100, reason: `top-up ${n + 1}` },
      });
    }
    const key = account.apiKey;
    const job = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key,
      body: { inputs: [{ upload_id: await upload(api, key, await sdrMp4({ width: 320, height: 180, seconds: 2 })) }] },
    });
    expect((await waitForJob(api, key, `/v1/sdr2hdr/jobs/${job.body.job_id}`)).status).toBe('succeeded');
    await asMember(api, account.session, 'PATCH', '/v1/account', { body: { spend_limit_usd: 0.5 } });
    const credits = (await call(api, 'GET', '/v1/account/credits', { key })).body;

    await page().getByRole('link', { name: 'Billing' }).click();
    await heading('Billing').waitFor();
    await page()
      .locator('dt:text-is("Available for new jobs") + dd')
      .getByText(`${credits.available_credits.toLocaleString('en-GB')} credits`)
      .waitFor();
    const buy = page().getByRole('link', { name: 'Buy credits' });
    expect(await buy.getAttribute('href')).toBe(TOPUP);
    expect(await buy.getAttribute('target')).toBe('_blank');

    const thisMonth = page().getByRole('row').filter({ hasText: '(this month)' });
    const spentUsd = `$${credits.spent_usd.toFixed(2)}`;
    await thisMonth.getByText(spentUsd, { exact: true }).waitFor();
    await thisMonth.getByText(`${Math.round((credits.spent_usd / 0.5) * 100)} % of $0.50`).waitFor();
    await checkPage(browser, 'billing');
  });

  it('the ledger pages 25 at a time and filters by kind and by dates (UTC days)', async () => {
    await heading('Billing').waitFor();
    const rows = page().locator('section[aria-labelledby="ledger-heading"] tbody tr');
    // 30 grants, then the job's hold and charge (and a release if it was charged less than held).
    const total = (await call(api, 'GET', '/v1/account/ledger?limit=100', { key: account.apiKey })).body.data.length;
    expect(total).toBeGreaterThanOrEqual(GRANTS + 2);
    await page().getByRole('button', { name: 'Next page' }).waitFor();
    expect(await rows.count()).toBe(25);
    expect(await rows.first().innerText()).toMatch(/Hold returned|Charged/);
    await page().getByRole('button', { name: 'Next page' }).click();
    await page().getByRole('button', { name: 'First page' }).waitFor();
    expect(await rows.count()).toBe(total - 25);
    await rows.last().getByText('top-up 1', { exact: true }).waitFor();

    await page().getByLabel('Kind', { exact: true }).selectOption('capture');
    await page().waitForURL(/kind=capture/);
    await page().waitForFunction(
      () =>
        (globalThis as any).document.querySelectorAll('section[aria-labelledby="ledger-heading"] tbody tr').length ===
        1,
    );
    await rows.first().getByText('Charged').waitFor();
    expect(await page().getByRole('button', { name: 'Next page' }).count()).toBe(0);

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await page().getByLabel('From', { exact: true }).fill(tomorrow);
    await page().getByText('No entries match these filters').waitFor();
    await page().getByRole('button', { name: 'Clear the filters' }).click();
    await page().getByRole('button', { name: 'Next page' }).waitFor();
    await checkPage(browser, 'billing-ledger');
  });

  it('Export CSV downloads every entry the filters keep, not only the page shown', async () => {
    const today = new Date().toISOString().slice(0, 10);
    await page().getByLabel('Kind', { exact: true }).selectOption('grant');
    await page().getByLabel('To', { exact: true }).fill(today);
    await page().waitForURL(new RegExp(`to=${today}`));
    const [download] = await Promise.all([
      page().waitForEvent('download'),
      page().getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(
      new RegExp(`^mediajobs-ledger-${account.accountId}-\\d{4}-\\d{2}-\\d{2}\\.csv$`),
    );
    const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\r\n');
    expect(lines[0]).toBe('created_at,id,kind,credits,balance_after,reserved_after,job_id,reason');
    // All 30 grants (the page shows 25), and nothing else.
    expect(lines.slice(1).map((line) => line.split(',')[2])).toEqual(Array(GRANTS).fill('grant'));
    expect(lines[lines.length - 1]).toMatch(/,grant,100,100,0,,top-up 1$/);
  });

  it('a new account lists only the months it existed (this month), not six rows of $0, at 390 px too', async () => {
    const fresh = await ownerAccount(api);
    await signInWithBrowser(browser, api, fresh.email);
    await page().setViewportSize({ width: 390, height: 844 });
    await page().goto(`${api.url}/dashboard/billing`);
    await heading('Billing').waitFor();
    const rows = page().locator('section[aria-labelledby="spend-heading"] tbody tr');
    await rows.first().getByText('(this month)').waitFor();
    await checkPage(browser, 'billing-new-account-390');
    expect(await rows.count()).toBe(1);
    await page().setViewportSize({ width: 1280, height: 900 });
  });
});
