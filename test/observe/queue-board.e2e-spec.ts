// The operators' queue board at /admin/queues (issue 15), in Debian's Chromium: refused without the admin
// token (a sign-in form for a browser, the error envelope for anything else), signing in with the token
// sets an HttpOnly cookie, the board lists a queued media job of its region, and a failed job is retried
// from the page. A screenshot lands in screenshots/queue-board/ (gitignored).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { BrowserContext, Page } from 'playwright-core';
import { mediaQueueName } from '../../src/queues/catalogue';
import { bullConnection } from '../../src/queues/drivers/bullmq-connection';
import { call, createAccount, startApi, type TestApi } from '../support/app';
import { launchChromium } from '../support/chromium';
import { upload } from '../support/jobs';
import { sdrMp4 } from '../fixtures/media';

export const SCREENSHOT_DIR = resolve(
  process.env.QUEUE_BOARD_SCREENSHOT_DIR ?? join(__dirname, '..', '..', 'screenshots', 'queue-board'),
);

describe('the queue board at /admin/queues', () => {
  let api: TestApi;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const region = `board${process.pid}`;
  const failRegion = `boardfail${process.pid}`;
  const outside: string[] = [];

  beforeAll(async () => {
    api = await startApi({ STORAGE_DIR: mkdtempSync(join(tmpdir(), 'mj-board-')) });
    // Both regions count as having had workers (they announce themselves so); `region` looks alive.
    const redis = new Redis(api.config.redisUrl);
    await redis.zadd(`${api.config.redisPrefix}:workers:${region}`, Date.now() + 3600_000, 'test-heartbeat');
    await redis.sadd(`${api.config.redisPrefix}:regions`, region, failRegion);
    redis.disconnect();
    profile = mkdtempSync(join(tmpdir(), 'mj-board-chromium-'));
    context = await launchChromium(profile);
    context.setDefaultTimeout(30_000);
    // Tests talk to loopback only: the board's web fonts (fonts.googleapis.com) are refused here.
    await context.route('**/*', (route) => {
      const { hostname } = new URL(route.request().url());
      if (hostname === '127.0.0.1' || hostname === 'localhost') return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    page = context.pages()[0] ?? (await context.newPage());
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await api?.close();
  });

  it('refuses without the admin token: a sign-in form for the browser, the error envelope for the API', async () => {
    const response = await page.goto(`${api.url}/admin/queues`);
    expect(response?.status()).toBe(401);
    await page.getByRole('heading', { name: 'mediajobs queues' }).waitFor();
    expect(await page.getByLabel('Admin token').getAttribute('type')).toBe('password');

    const data = await call(api, 'GET', '/admin/queues/api/queues');
    expect(data.status).toBe(401);
    expect(data.body.error).toMatchObject({ code: 'missing_api_key', param: 'X-Admin-Token' });
    const wrong = await call(api, 'GET', '/admin/queues/api/queues', { headers: { 'x-admin-token': 'x'.repeat(26) } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_api_key');
    // A wrong token on the form: refused again, no cookie.
    await page.getByLabel('Admin token').fill('not-the-admin-token-000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'That token is not valid.' }).waitFor();
    expect(await context.cookies()).toEqual([]);
  });

  it('signs in with the token (HttpOnly cookie), lists a queued job of its region', async () => {
    const account = await createAccount(api, { credits: 1000 });
    const uploadId = await upload(api, account.apiKey, await sdrMp4());
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], region },
    });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;

    await page.goto(`${api.url}/admin/queues`);
    await page.getByLabel('Admin token').fill(api.config.adminToken!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${api.url}/admin/queues`);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'mj_queue_board', httpOnly: true, sameSite: 'Strict', path: '/admin/queues' });
    expect(cookie.value).not.toContain(api.config.adminToken!);

    await page.getByText(mediaQueueName(region), { exact: true }).first().waitFor();
    await page.goto(`${api.url}/admin/queues/queue/${mediaQueueName(region)}?status=waiting`);
    await page.getByText(jobId).first().waitFor();
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'waiting-job.png'), fullPage: true });
  });

  it('retries a failed job from the page', async () => {
    // A job on another region's queue fails once (a bare BullMQ worker that throws), with no retries left.
    const name = mediaQueueName(failRegion);
    const connection = bullConnection(api.config, 'worker');
    const queue = new Queue(name, { connection, prefix: api.config.redisPrefix });
    const worker = new Worker(
      name,
      async () => {
        throw new Error('ffmpeg exited with code 1 (test failure)');
      },
      { connection, prefix: api.config.redisPrefix },
    );
    try {
      const failed = new Promise<void>((done) => worker.once('failed', () => done()));
      await queue.add('process-job', { jobId: 'job_boardretry' }, { jobId: 'job_boardretry', attempts: 1 });
      await failed;
      await worker.close();
      expect(await queue.getJobState('job_boardretry')).toBe('failed');

      await page.goto(`${api.url}/admin/queues/queue/${name}?status=failed`);
      await page.getByText('job_boardretry').first().waitFor();
      await page.getByText('ffmpeg exited with code 1 (test failure)').first().waitFor();
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'failed-job.png'), fullPage: true });
      // The job card's retry button (an icon; "Retry all" above the list has a label).
      await page
        .locator('button:has(svg.lucide-refresh-cw)')
        .filter({ hasNotText: /Retry all/ })
        .first()
        .click();
      // bull-board asks first: "Are you sure that you want to retry this job?"
      await page.getByText('Are you sure that you want to retry this job?').waitFor();
      await page.getByRole('button', { name: 'Confirm' }).click();
      const deadline = Date.now() + 15_000;
      while ((await queue.getJobState('job_boardretry')) !== 'waiting') {
        if (Date.now() > deadline) throw new Error(`still ${await queue.getJobState('job_boardretry')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
    expect(outside.every((url) => !url.startsWith('http://127.0.0.1'))).toBe(true);
  });
});
