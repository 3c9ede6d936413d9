// Every dashboard page at a phone's width (390 px) and a laptop's (1280 px), in Chromium, with an
// account that has something on every page: nothing wider than the window (no sideways scrolling),
// no id broken one letter a line, no serious accessibility violation, and a screenshot of each
// (screenshots/dashboard/responsive-<width>-<page>.png).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestApi } from '../support/app';
import { startStack } from '../support/worker';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { openBrowser, type DashboardBrowser } from './browser';
import { fullAccount, signInWithBrowser, type FullAccount } from './seed';

const WIDTHS = [390, 1280] as const;

/** Pages and the heading each one shows when it is ready. */
function pages(account: FullAccount): { name: string; path: string; heading: string | RegExp }[] {
  return [
    { name: 'overview', path: '/', heading: 'Overview' },
    { name: 'billing', path: '/billing', heading: 'Billing' },
    { name: 'keys', path: '/keys', heading: 'API keys' },
    { name: 'jobs', path: '/jobs', heading: 'Jobs' },
    { name: 'new-job', path: '/jobs/new', heading: 'New job' },
    { name: 'job', path: `/jobs/sdr2hdr/${account.jobId}`, heading: /^Job job_/ },
    { name: 'webhooks', path: '/webhooks', heading: 'Webhooks' },
    { name: 'webhook', path: `/webhooks/${account.endpointId}`, heading: 'Webhook endpoint' },
    { name: 'licenses', path: '/licenses', heading: 'Licences' },
    { name: 'settings', path: '/settings', heading: 'Settings' },
    { name: 'not-found', path: '/no-such-page', heading: 'Page not found' },
  ];
}

const PUBLIC_PAGES = [
  { name: 'login', path: '/login', heading: 'Sign in to mediajobs' },
  { name: 'forgot-password', path: '/forgot-password', heading: 'Reset your password' },
];

interface Layout {
  viewport: number;
  scrollWidth: number;
  /** Elements whose right edge passes the window's (what makes a page scroll sideways), first few. */
  overflowing: string[];
  /** Ids (job_…, key prefixes, …) laid out with fewer than 6 characters a line. */
  brokenIds: string[];
}

describe('every dashboard page at 390 px and 1280 px', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let browser: DashboardBrowser;
  let receiver: Receiver;
  let account: FullAccount;

  beforeAll(async () => {
    receiver = await startReceiver({ status: 500 });
    stack = await startStack({
      REGION: 'responsive',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-responsive-')),
      WEBHOOK_RETRY_SCHEDULE: '0',
    });
    api = stack.api;
    account = await fullAccount(api, receiver.url(''));
    browser = await openBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await receiver?.stop();
  });

  afterEach(() => {
    expect(browser.problems.splice(0)).toEqual([]);
  });

  async function layout(): Promise<Layout> {
    return browser.page.evaluate(() => {
      // In the page (no DOM types in the tests' TypeScript program).
      const scope = globalThis as any;
      const document = scope.document;
      const viewport: number = scope.innerWidth;
      const overflowing: string[] = [];
      for (const element of document.querySelectorAll('body *')) {
        const box = element.getBoundingClientRect();
        if (box.width > 0 && box.right > viewport + 0.5) {
          const name = `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).split(' ')[0]}` : ''}`;
          overflowing.push(`${name} right=${Math.round(box.right)}`);
        }
      }
      const brokenIds: string[] = [];
      for (const element of document.querySelectorAll('code, a, td, span')) {
        const text: string = (element.textContent ?? '').trim();
        if (!/^(job|upl|key|we|evt|lic|acct|req|led|mjk|ast)_[0-9A-Za-z]{6,}/.test(text)) continue;
        const lines = element.getClientRects().length;
        if (lines > 0 && text.length / lines < 6) brokenIds.push(`${text} in ${lines} lines`);
      }
      return {
        viewport,
        scrollWidth: document.documentElement.scrollWidth,
        overflowing: overflowing.slice(0, 5),
        brokenIds,
      };
    });
  }

  async function visit(path: string, heading: string | RegExp): Promise<void> {
    await browser.page.goto(`${api.url}/dashboard${path}`);
    await browser.page.getByRole('heading', { level: 1, name: heading }).waitFor();
    // Loaded: no "Loading …" left on the page.
    await browser.page.waitForFunction(() => !(globalThis as any).document.querySelector('.loading'));
  }

  /** Each page's layout, screenshot and axe verdict; every page is visited before anything is asserted. */
  async function survey(width: number, list: { name: string; path: string; heading: string | RegExp }[]) {
    const found: Record<string, unknown>[] = [];
    for (const { name, path, heading } of list) {
      await visit(path, heading);
      await browser.screenshot(`responsive-${width}-${name}`);
      const measured = await layout();
      const violations = (await browser.accessibilityViolations()).map((violation) => violation.id);
      if (measured.scrollWidth > width || measured.brokenIds.length || violations.length)
        found.push({ page: name, ...measured, violations });
    }
    return found;
  }

  for (const width of WIDTHS) {
    it(`at ${width} px: the public pages fit the window`, async () => {
      await browser.page.setViewportSize({ width, height: 844 });
      expect(await survey(width, PUBLIC_PAGES)).toEqual([]);
    });

    it(`at ${width} px: every signed-in page fits the window and shows ids whole`, async () => {
      await browser.page.setViewportSize({ width, height: 844 });
      await signInWithBrowser(browser, api, account.email);
      expect(await survey(width, pages(account))).toEqual([]);
    });
  }
});
