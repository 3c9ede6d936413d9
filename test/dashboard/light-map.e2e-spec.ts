// The light map on the dashboard's job page, in Chromium against the real API, worker and ffmpeg: an
// expand job's page shows "Where the light went" with the item's map as an image that loaded (the page's
// Content-Security-Policy allows the signed link: no refusal in the console), with alt text, and passes
// axe. It is legible at 1280 and 390 px (issue 42 item 2): the page draws the legend in readable text, in
// the PNG's own band colours; the map opens full size; the caption gives the frame's real time, the job
// view's light_map_frame_seconds. Screenshots: screenshots/dashboard/job-light-map.png, job-light-map-390.png.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEGEND_HEIGHT, LIGHT_BANDS } from '../../src/media/light-map';
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

    // Where the frame is: measured where the map was made — a keyframe near the middle, never the ends.
    const item = job.items[0];
    const at: number = item.output.light_map_frame_seconds;
    expect(at).toBeGreaterThanOrEqual(0.1 * item.duration_seconds);
    expect(at).toBeLessThanOrEqual(0.9 * item.duration_seconds);
    const seconds = (value: number) => `${Math.round(value * 10) / 10} s`;
    const caption = page.locator('.light-map figcaption');
    expect(await caption.innerText()).toContain(
      `Item 0: the frame at ${seconds(at)} of ${seconds(item.duration_seconds)}`,
    );

    // Open full size: a link to the same PNG, which answers as one.
    const full = page.getByRole('link', { name: 'Open the map full size' });
    expect(new URL((await full.getAttribute('href'))!).pathname).toBe(asset);
    const png = await fetch((await full.getAttribute('href'))!);
    expect([png.status, png.headers.get('content-type')]).toEqual([200, 'image/png']);

    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      // The legend the page draws: every band, in the PNG's colour, with text a person can read.
      const legend = page.getByRole('list', { name: 'Brightness of the output, in cd/m² (nits)' });
      const bands = await legend.getByRole('listitem').evaluateAll((elements: any[]) =>
        elements.map((element) => ({
          label: element.textContent,
          colour: (globalThis as any).getComputedStyle(element.querySelector('.swatch')).backgroundColor,
          fontPx: parseFloat((globalThis as any).getComputedStyle(element).fontSize),
          visible: element.getBoundingClientRect().width > 0,
        })),
      );
      const rgb = (hex: string) => `rgb(${[0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
      expect(bands.map(({ label, colour }) => ({ label, colour }))).toEqual(
        LIGHT_BANDS.map((band) => ({ label: band.label.replace('-', '–'), colour: rgb(band.colour) })),
      );
      for (const band of bands) expect(band).toMatchObject({ visible: true, fontPx: expect.any(Number) });
      expect(Math.min(...bands.map((band) => band.fontPx))).toBeGreaterThanOrEqual(12);
      // Nothing wider than the screen: the map scales, the legend wraps.
      const overflow = await page.evaluate(() => {
        const root = (globalThis as any).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });
      expect(overflow).toBeLessThanOrEqual(0);
      if (width === 390) await checkPage(browser, 'job-light-map-390');
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(browser.problems.splice(0)).toEqual([]);
  }, 240_000);
});
