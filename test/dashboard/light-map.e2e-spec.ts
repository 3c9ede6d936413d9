// The light map on the dashboard's job page, in Chromium against the real API, worker and ffmpeg: an
// expand job's page shows "Where the light went" with the item's map as an image that loaded (the page's
// Content-Security-Policy allows the signed link: no refusal in the console), with alt text, and passes
// axe. Screenshot: screenshots/dashboard/job-light-map.png.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEGEND_HEIGHT } from '../../src/media/light-map';
import { LIGHT_PATTERN, lightPatternMp4 } from '../fixtures/media';
import { call, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { ownerAccount, signInWithBrowser, type SeededAccount } from './seed';

describe('dashboard: the light map on the job page', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let browser: DashboardBrowser;
  let account: SeededAccount;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mj-light-page-'));
    stack = await startStack({ REGION: 'lightpage', STORAGE_DIR: dir });
    api = stack.api;
    account = await ownerAccount(api, { credits: 5000 });
    browser = await openBrowser();
    await signInWithBrowser(browser, api, account.email);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('an expand job shows its light map, loaded, with alt text, and no CSP refusal', async () => {
    const uploadId = await upload(api, account.apiKey, await lightPatternMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output: { mapping: 'expand', peak_nits: 1000 } },
    });
    expect(submitted.status).toBe(202);
    const jobId: string = submitted.body.job_id;
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 180_000);
    expect(job.status).toBe('succeeded');

    const page = browser.page;
    await page.goto(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
    await page.getByRole('heading', { level: 2, name: 'Where the light went' }).waitFor();
    const image = page.getByRole('img', { name: /Item 0: the source frame beside the output frame/ });
    await image.waitFor();
    // Loaded, at the PNG's own size: the browser fetched it through the signed link under the page's CSP.
    await page.waitForFunction(
      (element: any) => element.complete && element.naturalWidth > 0,
      await image.elementHandle(),
    );
    const size = await image.evaluate((element: any) => ({
      width: element.naturalWidth,
      height: element.naturalHeight,
    }));
    expect(size).toEqual({ width: 2 * LIGHT_PATTERN.width, height: LIGHT_PATTERN.height + LEGEND_HEIGHT });
    // The same asset as the job view's link (its signature is fresh for each read of the job).
    const asset = new URL(job.items[0].output.light_map_url).pathname;
    expect(new URL((await image.getAttribute('src'))!).pathname).toBe(asset);
    await page
      .getByText(/expanded highlights/)
      .first()
      .waitFor();
    await checkPage(browser, 'job-light-map');
    expect(browser.problems.splice(0)).toEqual([]);
  }, 240_000);
});
