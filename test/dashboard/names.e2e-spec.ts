// Names instead of ids on the dashboard (issue 42 item 6), in Chromium against the real API: a key created
// with a name is listed by it; an uploaded file's name, not upl_…, stands for the input in the jobs list and on
// the job page; a ledger row's job id is a link that opens that job's page. Screenshots:
// screenshots/dashboard/names-keys.png, names-jobs-list.png, names-job-page.png, names-ledger.png.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { workersKey } from '../../src/queues/keys';
import { sdrMp4 } from '../fixtures/media';
import { call, startApi, type TestApi } from '../support/app';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { ownerAccount, signInWithBrowser, type SeededAccount } from './seed';

const REGION = 'dashnames';

describe('dashboard: names instead of ids', () => {
  let api: TestApi;
  let browser: DashboardBrowser;
  let account: SeededAccount;
  let jobId: string;
  let uploadId: string;

  beforeAll(async () => {
    api = await startApi({ REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-dash-names-')) });
    // A live worker in the region, so the submit is admitted; the job stays queued (nothing runs it).
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(workersKey(api.config, REGION), Date.now() + 3600_000, 'test-dash-names');
    redis.disconnect();
    account = await ownerAccount(api, { credits: 5000 });
    const uploaded = await call(api, 'POST', '/v1/uploads?filename=sunset-trailer-final.mp4', {
      key: account.apiKey,
      rawBody: await readFile(await sdrMp4({ width: 320, height: 180, seconds: 1, audio: false })),
      headers: { 'content-type': 'video/mp4' },
    });
    uploadId = uploaded.body.upload_id;
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    jobId = submitted.body.job_id;
    browser = await openBrowser();
    await signInWithBrowser(browser, api, account.email);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  afterEach(() => {
    expect(browser.problems.splice(0)).toEqual([]);
  });

  const page = () => browser.page;

  it('a key created with a name is listed by its name, above its prefix', async () => {
    await page().goto(`${api.url}/dashboard/keys`);
    await page().getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page().getByLabel('Name (optional)').fill('Render farm');
    await page().getByRole('button', { name: 'Create key' }).click();
    const shown = page().getByRole('heading', { level: 2, name: /^New key Render farm \(mjk_\w+…\)$/ });
    await shown.waitFor();
    const prefix = /\((mjk_\w+)…\)/.exec(await shown.innerText())![1];
    const row = page().getByRole('row').filter({ hasText: prefix });
    expect(await row.getByRole('cell').first().innerText()).toBe(`Render farm\n${prefix}…`);
    // The account's first key was made without a name: it says so rather than leaving a blank.
    await page().getByRole('row').filter({ hasText: 'No name' }).first().waitFor();
    await checkPage(browser, 'names-keys');
  });

  it("the jobs list and the job page show the uploaded file's name, not upl_…", async () => {
    await page().goto(`${api.url}/dashboard/jobs`);
    const row = page().getByRole('row').filter({ hasText: jobId });
    await row.waitFor();
    const inputs = row.locator('td[data-label="Inputs"]');
    expect(await inputs.innerText()).toBe('sunset-trailer-final.mp4');
    await checkPage(browser, 'names-jobs-list');

    await row.getByRole('link', { name: jobId }).click();
    await page()
      .getByRole('heading', { level: 1, name: `Job ${jobId}` })
      .waitFor();
    const source = page().locator('td[data-label="Source"]');
    await source.getByText('sunset-trailer-final.mp4').waitFor();
    // The upload id stays beside it, smaller, for a support conversation.
    expect(await source.innerText()).toBe(`sunset-trailer-final.mp4\nupload ${uploadId}`);
    await checkPage(browser, 'names-job-page');
  });

  it('a file dropped on the New job page is uploaded under its name', async () => {
    await page().goto(`${api.url}/dashboard/jobs/new`);
    await page().getByRole('heading', { level: 1, name: 'New job' }).waitFor();
    const bytes = (await readFile(await sdrMp4({ width: 320, height: 180, seconds: 1, audio: false }))).toString(
      'base64',
    );
    const transfer = await page().evaluateHandle((base64) => {
      // In the page (no DOM types in the tests' TypeScript program).
      const scope = globalThis as any;
      const data = Uint8Array.from(scope.atob(base64) as string, (char) => char.charCodeAt(0));
      const dataTransfer = new scope.DataTransfer();
      dataTransfer.items.add(new scope.File([data], 'Sunset – take 3.mp4', { type: 'video/mp4' }));
      return dataTransfer;
    }, bytes);
    const uploadResponse = page().waitForResponse((response) => new URL(response.url()).pathname === '/v1/uploads');
    await page().locator('.dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    const uploaded = await uploadResponse;
    expect(uploaded.status()).toBe(201);
    expect(new URL(uploaded.url()).searchParams.get('filename')).toBe('Sunset – take 3.mp4');
    expect(((await uploaded.json()) as { filename: string }).filename).toBe('Sunset – take 3.mp4');
    await page()
      .getByText(/^Uploaded Sunset – take 3\.mp4/)
      .waitFor();
  });

  it("a ledger row's job id links to that job's page", async () => {
    await page().goto(`${api.url}/dashboard/billing`);
    await page().getByRole('heading', { level: 2, name: 'Ledger' }).waitFor();
    const link = page().getByRole('link', { name: jobId }).first();
    await link.waitFor();
    expect(await link.getAttribute('href')).toBe(`/dashboard/jobs/${jobId}`);
    await checkPage(browser, 'names-ledger');
    await link.click();
    await page()
      .getByRole('heading', { level: 1, name: `Job ${jobId}` })
      .waitFor();
    await page().waitForURL(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
    await page().locator('td[data-label="Source"]').getByText('sunset-trailer-final.mp4').waitFor();

    // Opened directly (a new tab from the link, a bookmark), the address finds the job too.
    await page().goto(`${api.url}/dashboard/jobs/${jobId}`);
    await page().waitForURL(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
    await page().locator('td[data-label="Source"]').getByText('sunset-trailer-final.mp4').waitFor();
  });
});
