// The job page shows what each output measured and its checks (docs/api-decisions.md §12), in Chromium
// against the real API and a real worker whose media runner spoils one item's output (one frame
// dropped, test/support/wrong-output-runner.ts): the good item lists its measured properties and four
// passed checks (✓); the spoiled one says failed, frame_count, expected 30, measured 29, charged 0.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, startApi, type TestApi } from '../support/app';
import { upload, waitForJob } from '../support/jobs';
import { startWorkerWithWrongOutputs } from '../support/wrong-output-runner';
import { checkPage, openBrowser, type DashboardBrowser } from './browser';
import { ownerAccount, signInWithBrowser, type SeededAccount } from './seed';

const REGION = 'dashboard-measured';

describe('the job page: measured output and checks', () => {
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startWorkerWithWrongOutputs>>;
  let browser: DashboardBrowser;
  let account: SeededAccount;

  beforeAll(async () => {
    const env = { REGION, STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-dash-measured-')) };
    api = await startApi(env);
    worker = await startWorkerWithWrongOutputs({
      ...env,
      PUBLIC_BASE_URL: api.config.publicBaseUrl,
      DOCS_URL: api.config.docsUrl,
    });
    account = await ownerAccount(api, { credits: 1000 });
    browser = await openBrowser();
    await signInWithBrowser(browser, api, account.email);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.close();
    await api?.close();
  });

  it('lists the measured properties and each check: ✓ passed, or failed with expected vs measured', async () => {
    const uploadId = await upload(api, account.apiKey, await sdrMp4({ width: 320, height: 180, seconds: 1 }));
    worker.runner.spoil.set(1, 'dropped_frame');
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }, { upload_id: uploadId }] },
    });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;
    await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${jobId}`, undefined, 180_000);

    const page = browser.page;
    await page.goto(`${api.url}/dashboard/jobs/sdr2hdr/${jobId}`);
    const section = page.locator('section[aria-labelledby="measured-heading"]');
    await section.getByRole('heading', { name: 'Measured output and checks' }).waitFor();

    const facts = section.locator('.measured-item').nth(0);
    await expect(facts.getByRole('heading', { name: 'Item 0' }).count()).resolves.toBe(1);
    const fact = async (label: string) => facts.locator('dt', { hasText: label }).locator('xpath=../dd').textContent();
    expect(await fact('Picture')).toBe('320×180, 10-bit');
    expect(await fact('Frames')).toBe('30');
    expect(await fact('Frame rate')).toBe('30 fps');
    expect(await fact('Colour')).toBe('bt2020 / smpte2084 / bt2020nc / tv');
    expect(await fact('ST 2086')).toBe('0.0001–1000 cd/m²');
    const rows = (item: number) =>
      section
        .locator('.measured-item')
        .nth(item)
        .locator('table.checks tbody tr')
        .evaluateAll((trs: any[]) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td: any) => td.textContent)));
    const good = await rows(0);
    expect(good.map(([name, result]) => [name, result])).toEqual([
      ['hdr_signalling', '✓ passed'],
      ['frame_count', '✓ passed'],
      ['duration', '✓ passed'],
      ['round_trip_ssim', '✓ passed'],
    ]);
    // The measured duration says its unit, as the expected one does.
    expect(good.find(([name]) => name === 'duration')?.[3]).toMatch(/^\d+(\.\d+)? s$/);
    // Each check's name is on one line (one box of an inline element per line), at desktop and phone width.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const lines = await section
        .locator('table.checks td:first-child code')
        .evaluateAll((codes: any[]) => codes.map((code) => [code.textContent, code.getClientRects().length]));
      expect(lines.filter(([, count]) => count !== 1)).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    const spoiled = await rows(1);
    expect(spoiled.find(([name]) => name === 'frame_count')).toEqual(['frame_count', '✗ failed', '30', '29']);
    await expect(section.locator('.measured-item').nth(1).getByText('No output was kept.').count()).resolves.toBe(1);
    // The notice names the ending for what it is; the items table says why the spoiled item failed.
    await expect(page.locator('section[aria-labelledby="error-heading"] .notice-title').textContent()).resolves.toBe(
      'The output failed its checks (not charged)',
    );
    await expect(page.getByRole('link', { name: 'output_check_failed' }).count()).resolves.toBeGreaterThan(0);
    await checkPage(browser, 'job-measured-checks');
    expect(browser.problems.splice(0)).toEqual([]);
  }, 240_000);
});
