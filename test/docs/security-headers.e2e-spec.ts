// Every HTML page the service serves (Swagger UI at /docs, the error reference, the queue board and its
// sign-in page, the dashboard) carries the same protective headers: a Content-Security-Policy that
// forbids framing and foreign scripts, X-Frame-Options, nosniff. In production over https every
// response carries HSTS. Checked on the wire and in Chromium: a framed /docs does not render, and
// Swagger UI still works under its policy.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { generateKeyPairSync } from 'node:crypto';
import { startApi, type TestApi } from '../support/app';
import { launchChromium } from '../support/chromium';

const HTML_PAGES = ['/docs', '/docs/', '/docs/operator', '/docs/errors.html', '/admin/queues'];

function expectProtected(path: string, headers: Headers): void {
  const csp = headers.get('content-security-policy') ?? '';
  expect({
    path,
    frameAncestors: /frame-ancestors 'none'/.test(csp),
    foreignScript: /script-src[^;]*(\*|https?:|'unsafe-inline'|'unsafe-eval')/.test(csp),
  }).toEqual({
    path,
    frameAncestors: true,
    foreignScript: false,
  });
  expect([path, headers.get('x-frame-options'), headers.get('x-content-type-options')]).toEqual([
    path,
    'DENY',
    'nosniff',
  ]);
}

describe('security headers of the HTML pages', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it.each(HTML_PAGES)('%s: CSP with frame-ancestors, X-Frame-Options, nosniff', async (path) => {
    const response = await fetch(`${api.url}${path}`, { headers: { accept: 'text/html' } });
    // The board answers a browser 401 with its sign-in page until the operator signs in.
    expect(response.status).toBe(path === '/admin/queues' ? 401 : 200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expectProtected(path, response.headers);
  });

  it("only Swagger UI's pages allow inline styles (its script styles elements at run time)", async () => {
    const swaggerUiPages = [
      '/docs',
      '/docs/',
      '/docs/index.html',
      '/docs/operator',
      '/docs/operator/',
      '/docs/operator/index.html',
    ];
    for (const path of [...swaggerUiPages, '/docs/errors.html', '/dashboard/']) {
      const csp = (await fetch(`${api.url}${path}`)).headers.get('content-security-policy') ?? '';
      expect([path, /style-src[^;]*'unsafe-inline'/.test(csp)]).toEqual([path, swaggerUiPages.includes(path)]);
    }
  });

  it('the queue board itself (signed in with the admin token) too', async () => {
    const response = await fetch(`${api.url}/admin/queues`, { headers: { 'x-admin-token': api.config.adminToken! } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expectProtected('/admin/queues (signed in)', response.headers);
  });

  it('no HSTS over plain http', async () => {
    const response = await fetch(`${api.url}/docs/errors.html`);
    expect(response.headers.get('strict-transport-security')).toBeNull();
  });

  describe('in a browser', () => {
    let context: BrowserContext;
    let profileDir: string;
    let framer: Server;

    beforeAll(async () => {
      profileDir = mkdtempSync(join(tmpdir(), 'mediajobs-chromium-'));
      context = await launchChromium(profileDir);
      // Another origin that frames the docs (Swagger UI keeps the API key in localStorage).
      framer = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(`<!doctype html><iframe id="docs" src="${api.url}/docs/" width="800" height="600"></iframe>`);
      });
      await new Promise<void>((resolve) => framer.listen(0, '127.0.0.2', resolve));
    });
    afterAll(async () => {
      await context?.close();
      await new Promise((resolve) => framer?.close(resolve));
      if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    });

    it('a page of another origin that frames /docs shows nothing of it', async () => {
      const page = await context.newPage();
      try {
        await page.goto(`http://127.0.0.2:${(framer.address() as AddressInfo).port}/`);
        await page.waitForTimeout(3000);
        const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
        const rendered = frame
          ? await frame
              .locator('.swagger-ui')
              .count()
              .catch(() => 0)
          : 0;
        expect(rendered).toBe(0);
      } finally {
        await page.close();
      }
    });

    it('Swagger UI and the error reference work under their policy (no violation reported)', async () => {
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text()))
          violations.push(`${page.url()}: ${message.text()}`);
      });
      try {
        await page.goto(`${api.url}/docs/`);
        await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 20_000 });
        await page.goto(`${api.url}/docs/errors.html`);
        await page.locator('#filter').fill('credits');
        await page.goto(`${api.url}/admin/queues`);
        await page.locator('input#token').waitFor({ state: 'visible' });
        expect(violations).toEqual([]);
      } finally {
        await page.close();
      }
    });
  });
});

describe('HSTS in production over https', () => {
  let api: TestApi;

  beforeAll(async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    api = await startApi({
      NODE_ENV: 'production',
      ALLOW_PRIVATE_URLS: '', // the test default (port-less loopback) is refused in production
      PUBLIC_BASE_URL: 'https://api.mediajobs.example',
      ASSET_URL_SECRET: 'hsts-test-asset-secret-0123',
      LICENSE_SIGNING_KEY: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  it.each(['/docs/errors.html', '/health/live', '/v1/account/credits'])(
    '%s carries Strict-Transport-Security',
    async (path) => {
      const response = await fetch(`${api.url}${path}`);
      expect(response.headers.get('strict-transport-security')).toMatch(/^max-age=\d{8,}; includeSubDomains$/);
    },
  );
});
