// Debian's Chromium through playwright-core for the dashboard tests: a fresh profile per browser,
// screenshots of every page into screenshots/dashboard/ (gitignored; DASHBOARD_SCREENSHOT_DIR
// overrides), axe-core's verdict on each page, and every console error and CSP refusal collected
// so a test can require there were none.
import { readFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';

export const SCREENSHOT_DIR = resolve(
  process.env.DASHBOARD_SCREENSHOT_DIR ?? join(__dirname, '..', '..', 'screenshots', 'dashboard'),
);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

export interface DashboardBrowser {
  context: BrowserContext;
  page: Page;
  /** Console errors (CSP refusals among them) and failed requests other than expected 4xx answers. */
  problems: string[];
  screenshot(name: string): Promise<void>;
  /** axe-core's serious and critical violations on the page as it is now. */
  accessibilityViolations(): Promise<AxeViolation[]>;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<DashboardBrowser> {
  const profileDir = mkdtempSync(join(tmpdir(), 'mediajobs-dashboard-chromium-'));
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const context = await launchChromium(profileDir, { acceptDownloads: true });
  // Playwright's own timeouts, generous for a loaded 2-core machine: every wait is for a condition.
  context.setDefaultTimeout(30_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('console', (message) => {
    // A 4xx the page shows as an error envelope is expected; Chromium logs it as a failed resource.
    if (
      message.type() === 'error' &&
      !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
    )
      problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    const failure = request.failure()?.errorText ?? '';
    // Navigations away from a download link and aborted uploads are not failures of the app.
    if (!/ERR_ABORTED/.test(failure)) problems.push(`request failed: ${request.url()} ${failure}`);
  });
  return {
    context,
    page,
    problems,
    screenshot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    accessibilityViolations: async () => {
      // Evaluated through the DevTools protocol, which the page's CSP does not govern (no inline script).
      await page.evaluate(AXE_SOURCE);
      const violations = await page.evaluate(async () => {
        // In the page (no DOM types in the tests' TypeScript program).
        const scope = globalThis as any;
        const result: { violations: AxeViolation[] } = await scope.axe.run(scope.document, {
          resultTypes: ['violations'],
        });
        return result.violations.map((violation) => ({
          id: violation.id,
          impact: violation.impact,
          help: violation.help,
          nodes: violation.nodes.map((node) => ({ target: node.target, failureSummary: node.failureSummary })),
        }));
      });
      return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    },
    close: async () => {
      await context.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

/** Screenshot and accessibility check of the page as it is: no serious or critical axe violation. */
export async function checkPage(browser: DashboardBrowser, name: string): Promise<void> {
  await browser.screenshot(name);
  const violations = await browser.accessibilityViolations();
  expect({ page: name, violations }).toEqual({ page: name, violations: [] });
}
