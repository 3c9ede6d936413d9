// How the API serves the built dashboard: client routes answer index.html, hashed assets are cached
// for good and index.html revalidated, a strict Content-Security-Policy on every response, gzip,
// `/` and `/login` lead to the app, and the first load stays within its JavaScript budget.
import { startApi, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';
import { DASHBOARD_CSP } from '../../src/dashboard/setup-dashboard';

/** The budget of the issue: the first load transfers at most 250 KB of compressed JavaScript. */
const FIRST_LOAD_JS_BUDGET_BYTES = 250 * 1024;

describe('the dashboard as the API serves it', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${api.url}${path}`, { headers, redirect: 'manual' });

  it('answers index.html at /dashboard and every client route, revalidated, with the CSP and framing refused', async () => {
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/jobs/sdr2hdr/job_abc', '/dashboard/set-password']) {
      const response = await get(path);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await response.text();
      expect(html).toContain('<div id="root"></div>');
      // No inline script: every script is a file of this origin.
      expect(html.match(/<script[^>]*>/g)!.every((tag) => / src="\/dashboard\/assets\/[^"]+\.js"/.test(tag))).toBe(
        true,
      );
    }
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
    expect(DASHBOARD_CSP).not.toContain('unsafe-inline');

    // Revalidation answers 304 while the file is unchanged.
    const first = await get('/dashboard/');
    const again = await get('/dashboard/keys', { 'if-none-match': first.headers.get('etag')! });
    expect(again.status).toBe(304);
  });

  it('serves hashed assets immutable and gzipped, and a missing asset as a 404 envelope (never index.html)', async () => {
    const html = await (await get('/dashboard/')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((found) => found[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const response = await get(asset, { 'accept-encoding': 'gzip' });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-encoding')).toBe('gzip');
      expect(response.headers.get('vary')).toBe('Accept-Encoding');
    }
    const missing = await fetch(`${api.url}/dashboard/assets/index-missing.js`);
    expect(missing.status).toBe(404);
    expectError(api, { status: 404, headers: missing.headers, body: await missing.json() }, 'route_not_found');
  });

  it('sends / and /login to the dashboard', async () => {
    expect((await get('/')).headers.get('location')).toBe('/dashboard/');
    expect((await get('/login')).headers.get('location')).toBe('/dashboard/login');
  });

  it('the first load transfers at most 250 KB of gzip-compressed JavaScript', async () => {
    const html = await (await get('/dashboard/')).text();
    const scripts = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="(\/dashboard\/assets\/[^"]+\.js)"/g)].map(
      (found) => found[1],
    );
    expect(scripts.length).toBeGreaterThan(0);
    let compressed = 0;
    for (const script of scripts) {
      // Content-Length is what travels (fetch hands back the body already decompressed).
      const response = await get(script, { 'accept-encoding': 'gzip' });
      expect(response.headers.get('content-encoding')).toBe('gzip');
      compressed += Number(response.headers.get('content-length'));
      await response.arrayBuffer();
    }
    expect(compressed).toBeGreaterThan(10 * 1024);
    expect(compressed).toBeLessThanOrEqual(FIRST_LOAD_JS_BUDGET_BYTES);
    process.stdout.write(`dashboard first-load JavaScript: ${compressed} bytes gzip\n`);
  });
});
