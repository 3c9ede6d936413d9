// The job page plays an HLS package (docs/api-guide.md, "Streaming packages") in Debian's Chromium through
// hls.js: the SDR rung (H.264) and the AV1 PQ rung, each chosen in the page's rendition picker (hls.js's
// currentLevel), play to at least 2 s with the chosen rung the one playing; the HEVC rung is listed as not
// decodable here (Chromium on Linux has no HEVC decoder). No CSP refusal, no console error, axe clean, and
// legible at 390 px. The package is a real one ended as the ladder worker will (test/support/hls-package.ts).
import { call, startApi, type TestApi } from '../support/app';
import { markRegionHealthy } from '../support/chaos-accounts';
import { finishWithPackage } from '../support/hls-package';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { ownerAccount, signInWithBrowser, type SeededAccount } from './seed';

const REGION = 'package-page';

describe('dashboard: an HLS package on the job page', () => {
  let api: TestApi;
  let browser: DashboardBrowser;
  let account: SeededAccount;

  beforeAll(async () => {
    // A player fetches many files a second from one address: above the public routes' per-IP limit.
    api = await startApi({ REGION, IP_RATE_LIMIT: '1000' });
    await markRegionHealthy(api, REGION);
    account = await ownerAccount(api, { credits: 5000 });
    browser = await openBrowser();
    await signInWithBrowser(browser, api, account.email);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('plays the SDR and the AV1 rung to 2 s, each as chosen, and lists every rung', async () => {
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ seconds: 3 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const jobId: string = submitted.body.job_id;
    await finishWithPackage(api, jobId);

    const page = browser.page;
    await page.goto(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
    await page.getByRole('heading', { level: 2, name: 'Streaming package' }).waitFor();
    const table = page.getByRole('table', { name: 'Renditions of item 0' });
    await table.waitFor();
    // Every rung with its codec, picture, range and bandwidth; once hls.js has read the master, whether it plays here.
    await page.waitForFunction(
      () => !(globalThis as any).document.querySelector('.renditions')?.textContent.includes('…'),
    );
    const rows = await table
      .locator('tbody tr')
      .evaluateAll((elements: any[]) =>
        elements.map((row) => [...row.querySelectorAll('td')].map((cell: any) => cell.textContent)),
      );
    expect(rows.map((cells) => [cells[0], cells[1], cells[2], cells[5]])).toEqual([
      ['H.264', '320×180 · 30 fps', 'SDR', 'Yes'],
      ['AV1', '320×180 · 30 fps', 'PQ', 'Yes'],
      ['HEVC', '320×180 · 30 fps', 'PQ', 'No (no decoder here)'],
    ]);
    for (const cells of rows) expect(cells[3]).toMatch(/^\d+ kb\/s \/ \d+ kb\/s$/);
    await checkPage(browser, 'job-package');

    const picker = page.getByLabel('Rendition');
    const video = page.getByRole('region', { name: 'Streaming package' }).locator('video');
    for (const rung of ['H.264 320×180 SDR', 'AV1 320×180 PQ']) {
      await page.goto(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
      await picker.locator('option', { hasText: rung }).waitFor({ state: 'attached' });
      await picker.selectOption({ label: rung });
      await video.evaluate((element: any) => {
        element.muted = true;
        return element.play();
      });
      await page.waitForFunction((element: any) => element.currentTime >= 2, await video.elementHandle(), {
        timeout: 60_000,
      });
      // The rung that played is the one chosen (hls.js's LEVEL_SWITCHED), and its frames were decoded (a
      // loaded headless Chromium presents fewer than 30 a second: at least one second's worth).
      await page.getByText(`Playing ${rung}`).waitFor();
      const decoded = await video.evaluate((element: any) => element.getVideoPlaybackQuality().totalVideoFrames);
      expect(decoded).toBeGreaterThanOrEqual(30);
    }

    await page.setViewportSize({ width: 390, height: 900 });
    const overflow = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await checkPage(browser, 'job-package-390');
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(browser.problems.splice(0)).toEqual([]);
  }, 240_000);
});

// The same page with a package the real worker made (`output.package: hls` asked at the submit, its own API
// and worker: a worker beside the test-ended jobs above would take them too).
describe('dashboard: a worker-made HLS package on the job page', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let browser: DashboardBrowser;
  let account: SeededAccount;

  beforeAll(async () => {
    stack = await startStack({ REGION: 'package-page-worker', IP_RATE_LIMIT: '1000' });
    account = await ownerAccount(stack.api, { credits: 5000 });
    browser = await openBrowser();
    await signInWithBrowser(browser, stack.api, account.email);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('plays the SDR and the AV1 rung the worker made to 2 s', async () => {
    const api = stack.api;
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ seconds: 3 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output: { package: 'hls', codecs: ['hevc', 'av1'] } },
    });
    expect(submitted.status).toBe(202);
    const jobId: string = submitted.body.job_id;
    const view = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 300_000);
    expect(view.status).toBe('succeeded');

    const page = browser.page;
    const picker = page.getByLabel('Rendition');
    const video = page.getByRole('region', { name: 'Streaming package' }).locator('video');
    for (const rung of ['H.264 320×180 SDR', 'AV1 320×180 PQ']) {
      await page.goto(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
      await picker.locator('option', { hasText: rung }).waitFor({ state: 'attached' });
      await picker.selectOption({ label: rung });
      await video.evaluate((element: any) => {
        element.muted = true;
        return element.play();
      });
      await page.waitForFunction((element: any) => element.currentTime >= 2, await video.elementHandle(), {
        timeout: 60_000,
      });
      await page.getByText(`Playing ${rung}`).waitFor();
    }
    expect(browser.problems.splice(0)).toEqual([]);
  }, 360_000);
});
