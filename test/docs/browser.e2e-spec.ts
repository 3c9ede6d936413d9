// A real browser (Debian chromium through playwright-core, headless) reads the docs: Swagger UI
// renders the operations, and the doc_url of a real error lands on its section of the error page.
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { parseConfig } from '../../src/common/config/config';
import { createHttpApp } from '../../src/http-app';
import { AdminService } from '../../src/admin/admin.service';
import { launchChromium } from '../support/chromium';

/** A free loopback port, so PUBLIC_BASE_URL and DOCS_URL can name the server before it starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

describe('docs in a browser', () => {
  let app: NestFastifyApplication;
  let url: string;
  let context: BrowserContext;
  let page: Page;
  let profileDir: string;
  let screenshotDir: string;
  const failedRequests: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const config = parseConfig({ ...process.env, PORT: String(port), PUBLIC_BASE_URL: url, DOCS_URL: `${url}/docs` });
    app = await createHttpApp(config);
    await app.listen({ port, host: '127.0.0.1' });

    profileDir = mkdtempSync(join(tmpdir(), 'mediajobs-chromium-'));
    // Screenshots are kept where DOCS_SCREENSHOT_DIR says; otherwise they go to a temporary folder.
    screenshotDir = process.env.DOCS_SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'mediajobs-screenshots-'));
    mkdirSync(screenshotDir, { recursive: true });
    context = await launchChromium(profileDir);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.url()}`);
    });
    page.on('requestfailed', (request) => failedRequests.push(`failed ${request.url()}`));
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    if (screenshotDir && !process.env.DOCS_SCREENSHOT_DIR) rmSync(screenshotDir, { recursive: true, force: true });
  });

  it('Swagger UI at /docs renders the operations and their error responses', async () => {
    await page.goto(`${url}/docs`);
    const credits = page
      .locator('.opblock', { hasText: 'Credit balance, reservations, spend and quota of this period' })
      .first();
    await credits.waitFor({ state: 'visible', timeout: 20_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(5);

    // Expanding an operation shows its documented 401 with the envelope's examples.
    await credits.locator('.opblock-summary').first().click();
    const unauthorised = credits.locator('tr.response[data-code="401"]');
    await unauthorised.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await unauthorised.textContent()).toContain('missing_api_key');

    await page.screenshot({ path: join(screenshotDir, 'swagger-ui.png') });
    // Every asset (CSS, JS, the document itself) came from this server without an error.
    expect(failedRequests).toEqual([]);
  });

  it('the page draws an OpenAPI 3.0 rendition of /docs/openapi.json: the same operations, the webhooks as callbacks of the endpoint registration', async () => {
    await page.goto(`${url}/docs`);
    await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 20_000 });
    const drawn = await page.evaluate(() =>
      (globalThis as unknown as { ui: { specSelectors: { specJson(): { toJS(): any } } } }).ui.specSelectors
        .specJson()
        .toJS(),
    );
    const published = (await (await fetch(`${url}/docs/openapi.json`)).json()) as any;
    expect([published.openapi, drawn.openapi]).toEqual(['3.1.0', '3.0.3']);
    expect(Object.keys(drawn.paths)).toEqual(Object.keys(published.paths));
    const text = JSON.stringify(drawn);
    // 3.0 has no null type: every nullable field is `nullable: true`.
    expect(text).not.toMatch(/"type":\[|"type":"null"/);
    expect(drawn.components.schemas.ErrorObject.properties.param).toMatchObject({ type: 'string', nullable: true });
    expect(Object.keys(drawn.paths['/v1/webhook-endpoints'].post.callbacks).sort()).toEqual(
      Object.keys(published.webhooks).sort(),
    );

    // A reader finds the events under the registration's Callbacks tab.
    const register = page.locator('#operations-webhooks-webhookEndpointsCreate');
    await register.locator('.opblock-summary').first().click();
    await register.locator('.tab-item', { hasText: 'Callbacks' }).click();
    const callbacks = register.locator('.callbacks-container, .callbacks');
    await callbacks.getByText('job.succeeded', { exact: true }).first().waitFor({ state: 'visible', timeout: 10_000 });
    await page.screenshot({ path: join(screenshotDir, 'swagger-ui-callbacks.png'), fullPage: false });
    expect(failedRequests).toEqual([]);
  });

  const tagsAt = async (path: string): Promise<(string | null)[]> => {
    await page.goto(`${url}${path}`);
    await page.locator('.opblock-tag').first().waitFor({ state: 'visible', timeout: 20_000 });
    return page
      .locator('.opblock-tag')
      .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-tag')));
  };

  it("the customer reference at /docs lists the tags in a user's journey order, and nothing of operators", async () => {
    const tags = await tagsAt('/docs');
    const journey = ['uploads', 'sdr2hdr', 'audio', 'account', 'webhooks', 'events', 'license'];
    expect(tags.filter((tag) => journey.includes(tag ?? ''))).toEqual(journey);
    expect(tags.filter((tag) => ['admin', 'sessions', 'members', 'operations'].includes(tag ?? ''))).toEqual([]);
    expect(await page.locator('.opblock', { hasText: '/v1/admin/' }).count()).toBe(0);
  });

  it('the operator reference at /docs/operator shows the admin, session and health operations, admin last', async () => {
    const tags = await tagsAt('/docs/operator');
    expect(tags).toEqual(expect.arrayContaining(['sessions', 'members', 'operations', 'admin']));
    expect(tags[tags.length - 1]).toBe('admin');
    expect(tags).not.toContain('sdr2hdr');
    await page.locator('.opblock', { hasText: '/v1/admin/accounts' }).first().waitFor({ state: 'visible' });
    await page.screenshot({ path: join(screenshotDir, 'swagger-ui-operator.png') });
    expect(failedRequests).toEqual([]);
  });

  it('Swagger UI remembers the API key across a reload, and "Try it out" sends it', async () => {
    const { api_key } = await app.get(AdminService).createAccount('docs reader', 'pro');
    await page.goto(`${url}/docs`);
    await page.locator('button.authorize').first().click();
    const scheme = page.locator('.auth-container', { hasText: 'X-API-Key' }).first();
    await scheme.locator('input').first().fill(api_key.key!);
    await scheme.locator('button.authorize').click();
    await page.locator('button.btn-done').first().click();

    await page.reload();
    const credits = page
      .locator('.opblock', { hasText: 'Credit balance, reservations, spend and quota of this period' })
      .first();
    await credits.waitFor({ state: 'visible', timeout: 20_000 });
    await credits.locator('.opblock-summary').first().click();
    await credits.locator('button.try-out__btn').click();
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith('/v1/account/credits')),
      credits.locator('button.execute').click(),
    ]);
    expect(answer.request().headers()['x-api-key']).toBe(api_key.key);
    expect(answer.status()).toBe(200);
  });

  it('the error reference reads on a phone: one column, a filter, the code in view', async () => {
    const phone = await context.newPage();
    try {
      await phone.setViewportSize({ width: 390, height: 844 });
      await phone.goto(`${url}/docs/errors.html#spend_limit_exceeded`);
      const section = phone.locator('[id="spend_limit_exceeded"]');
      await section.waitFor({ state: 'visible' });
      const box = await section.boundingBox();
      expect(box && box.y >= 0 && box.y < 844 && box.x >= 0 && box.x + box.width <= 390).toBe(true);
      // Nothing wider than the screen: no sideways scrolling.
      // A string: this file is compiled without the DOM library.
      const widths = await phone.evaluate<{ page: number; screen: number }>(
        '({ page: document.documentElement.scrollWidth, screen: window.innerWidth })',
      );
      expect(widths.page).toBeLessThanOrEqual(widths.screen);
      await phone.screenshot({ path: join(screenshotDir, 'errors-page-phone.png') });

      // The filter narrows the contents and the sections to the matching codes.
      await phone.goto(`${url}/docs/errors.html`);
      await phone.locator('#filter').fill('credits');
      const visibleCodes = await phone
        .locator('section.code')
        .evaluateAll((elements) =>
          elements.filter((element) => !(element as { hidden?: boolean }).hidden).map((element) => element.id),
        );
      expect(visibleCodes).toContain('insufficient_credits');
      expect(visibleCodes).not.toContain('missing_api_key');
      expect(await phone.locator('nav.toc a[href="#insufficient_credits"]').isVisible()).toBe(true);
      expect(await phone.locator('nav.toc a[href="#missing_api_key"]').isVisible()).toBe(false);
      await phone.locator('#filter').fill('no such code at all');
      expect(await phone.locator('#filter-empty').isVisible()).toBe(true);
    } finally {
      await phone.close();
    }
    expect(failedRequests).toEqual([]);
  });

  it("a real error's doc_url opens the error reference at that code", async () => {
    const response = await fetch(`${url}/v1/account/credits`);
    expect(response.status).toBe(401);
    const { error } = (await response.json()) as { error: { code: string; doc_url: string } };
    expect(error.code).toBe('missing_api_key');
    expect(error.doc_url).toBe(`${url}/docs/errors.html#missing_api_key`);

    await page.goto(error.doc_url);
    const section = page.locator(`[id="${error.code}"]`);
    await section.waitFor({ state: 'visible' });
    expect(await page.locator(':target').getAttribute('id')).toBe(error.code);
    // Scrolled into view, not merely present further down the page.
    const box = await section.boundingBox();
    const viewport = page.viewportSize();
    const inViewport = Boolean(box && viewport && box.y >= 0 && box.y < viewport.height);
    expect(inViewport).toBe(true);
    expect(await section.textContent()).toContain('Send your API key in the X-API-Key header.');

    await page.screenshot({ path: join(screenshotDir, 'errors-page.png') });
    expect(failedRequests).toEqual([]);
  });
});
