// The job page plays an HLS package (docs/api-guide.md, "Streaming packages") in Debian's Chromium through
// hls.js: the SDR rung (H.264) and the AV1 PQ rung, each chosen in the page's rendition picker (hls.js's
// currentLevel), play to at least 2 s with the chosen rung the one playing; the HEVC rung is listed as not
// decodable here (Chromium on Linux has no HEVC decoder). No CSP refusal, no console error, axe clean, and
// legible at 390 px. The package is the ladder worker's own (a real job with `package: hls`, default segments):
// choosing a rung makes hls.js drop the buffered video under the playhead, and Chromium decodes again only
// from the next keyframe, so the frames decoded by 2 s also hold the worker's keyframe interval to account
// (one keyframe per 4 s segment froze the picture: 6 frames decoded while the audio played on).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startStack } from '../support/worker';
import { sdrMp4 } from '../fixtures/media';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { ownerAccount, signInWithBrowser, type SeededAccount } from './seed';

const REGION = 'package-page';

describe('dashboard: an HLS package on the job page', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let storageDir: string;
  let browser: DashboardBrowser;
  let account: SeededAccount;

  beforeAll(async () => {
    storageDir = await mkdtemp(join(tmpdir(), 'mj-package-page-'));
    // A player fetches many files a second from one address: above the public routes' per-IP limit.
    stack = await startStack({ REGION, IP_RATE_LIMIT: '1000', STORAGE_DIR: storageDir });
    api = stack.api;
    account = await ownerAccount(api, { credits: 5000 });
    browser = await openBrowser();
    await signInWithBrowser(browser, api, account.email);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  it('plays the SDR and the AV1 rung to 2 s, each as chosen, and lists every rung', async () => {
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ seconds: 3 }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output: { package: 'hls', codecs: ['hevc', 'av1'] } },
    });
    expect(submitted.status).toBe(202);
    const jobId: string = submitted.body.job_id;
    const view = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 180_000);
    expect(view.items[0].status).toBe('succeeded');

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
      ['HEVC', '320×180 · 30 fps', 'PQ', 'No (no decoder here)'],
      ['AV1', '320×180 · 30 fps', 'PQ', 'Yes'],
      ['H.264', '320×180 · 30 fps', 'SDR', 'Yes'],
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
      // loaded headless Chromium presents fewer than 30 a second, and the picture waits for the first keyframe
      // after the switch: at least one second's worth).
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
