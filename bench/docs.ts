// How long the API reference takes to show its operations in a browser: Debian's Chromium (headless,
// through playwright-core) opens our /docs page with an empty cache and the time from navigation to
// the moment every operation of the document is on the page is read from the page's own clock.
// Bare: the same Swagger UI (swagger-ui-dist, the copy the API serves) on a static page with a
// one-operation document, i.e. what Swagger UI costs before any document of ours.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createEnvironment } from './lib/environment';
import { startProcess } from './lib/processes';
import { compare, type BenchContext, type BenchResult } from './lib/report';
import { median, round } from './lib/stats';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium';

/** The customer reference must show its operations within this (issue 27 item 9). */
const TARGET_MS = 1000;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** Operations under `paths` of an OpenAPI document: what Swagger UI draws one block for. */
export function operationCount(document: { paths?: Record<string, Record<string, unknown>> }): number {
  return Object.values(document.paths ?? {}).reduce(
    (sum, item) => sum + METHODS.filter((method) => item[method] !== undefined).length,
    0,
  );
}

export interface RenderTime {
  /** From navigation start until the operations are on the page, by the page's clock. */
  wallMs: number;
  /**
   * CPU time the page's renderer spent meanwhile: reported beside the wait, robust to load, but more
   * than the wait on an idle machine (the renderer's work runs on several threads).
   */
  cpuMs: number;
}

/** CPU time used so far by the browser's renderer processes (SystemInfo.getProcessInfo), in ms. */
async function rendererCpuMs(browser: Browser): Promise<number> {
  const session = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = await session.send('SystemInfo.getProcessInfo');
    return processInfo.filter((info) => info.type === 'renderer').reduce((sum, info) => sum + info.cpuTime * 1000, 0);
  } finally {
    await session.detach();
  }
}

/** How long `url` takes to show `operations` operation blocks, in a fresh context (cold cache). */
export async function timeToOperations(browser: Browser, url: string, operations: number): Promise<RenderTime> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const before = await rendererCpuMs(browser);
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForFunction(
      (n) =>
        (
          globalThis as unknown as { document: { querySelectorAll(selector: string): { length: number } } }
        ).document.querySelectorAll('.opblock').length >= n,
      operations,
      { polling: 'raf', timeout: 120_000 },
    );
    const wallMs = await page.evaluate(() => performance.now());
    return { wallMs, cpuMs: (await rendererCpuMs(browser)) - before };
  } finally {
    await context.close();
  }
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

const ONE_OPERATION = {
  openapi: '3.1.0',
  info: { title: 'bare', version: '1' },
  paths: { '/ping': { get: { summary: 'Ping', responses: { '200': { description: 'OK' } } } } },
};

/** Swagger UI from swagger-ui-dist showing `document` (default: one operation), on a loopback port. */
export async function bareSwaggerUi(
  document: object = ONE_OPERATION,
  options: Record<string, unknown> = {},
): Promise<{ url: string; server: Server }> {
  const dist = dirname(require.resolve('swagger-ui-dist/package.json'));
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>bare</title>
<link rel="stylesheet" href="/swagger-ui.css"></head><body><div id="swagger-ui"></div>
<script src="/swagger-ui-bundle.js"></script><script src="/init.js"></script></body></html>`;
  const init = `window.ui = SwaggerUIBundle(${JSON.stringify({ url: '/openapi.json', dom_id: '#swagger-ui', validatorUrl: null, ...options })});`;
  const files: Record<string, [string, string | Buffer]> = {
    '/': ['text/html', page],
    '/init.js': ['text/javascript', init],
    '/openapi.json': ['application/json', JSON.stringify(document)],
    '/swagger-ui.css': ['text/css', readFileSync(join(dist, 'swagger-ui.css'))],
    '/swagger-ui-bundle.js': ['text/javascript', readFileSync(join(dist, 'swagger-ui-bundle.js'))],
  };
  const server = createServer((request, response) => {
    const file = files[request.url ?? ''];
    if (!file) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': file[0] }).end(file[1]);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

export async function benchDocs(context: BenchContext): Promise<BenchResult> {
  const runs = context.quick ? 3 : 7;
  const env = await createEnvironment('docs');
  // The target is the reader's wait (wall time), judged only on an idle machine: the renderer spreads its
  // work over threads (its CPU time exceeds the wall time there), so CPU is no stand-in for the wait, and a
  // loaded machine stretches the wait many times over.
  const loadAtStart = loadavg()[0];
  const api = await startProcess('dist/src/main.js', env.serviceEnv);
  const bare = await bareSwaggerUi();
  const browser = await launchBrowser();
  try {
    const documentText = await (await fetch(`${api.url}/docs/openapi.json`)).text();
    const operations = operationCount(JSON.parse(documentText) as Parameters<typeof operationCount>[0]);
    const ours: RenderTime[] = [];
    const baseline: RenderTime[] = [];
    // Alternated, so a load spike on the shared machine hits both sides alike.
    for (let run = 0; run < runs; run++) {
      ours.push(await timeToOperations(browser, `${api.url}/docs`, operations));
      baseline.push(await timeToOperations(browser, bare.url, 1));
      context.log(
        `run ${run + 1}: ours ${round(ours[run].cpuMs)} ms CPU (${round(ours[run].wallMs)} ms wall), ` +
          `bare ${round(baseline[run].cpuMs)} ms (${round(baseline[run].wallMs)} ms wall)`,
      );
    }
    const busy = ours.map((time) => time.cpuMs);
    const waits = ours.map((time) => time.wallMs);
    return compare(
      'docs',
      `Swagger UI at /docs shows all ${operations} operations of /docs/openapi.json (${Math.round(documentText.length / 1024)} KB) in Chromium, cold cache: wall time by the page's clock; bare: the same Swagger UI with a one-operation document`,
      {
        metric: 'ms to operations rendered',
        ours: waits,
        bare: baseline.map((time) => time.wallMs),
        higherIsBetter: false,
      },
      { text: `≤ ${TARGET_MS} ms, idle machine`, met: () => median(waits) <= TARGET_MS && loadAtStart < 1 },
      {
        operations,
        document_bytes: documentText.length,
        cpu_median_ms: round(median(busy)),
        wall_median_ms: round(median(ours.map((time) => time.wallMs))),
        bare_wall_median_ms: round(median(baseline.map((time) => time.wallMs))),
        load_average_1m: round(loadAtStart),
        target_ms: TARGET_MS,
      },
    );
  } finally {
    await browser.close();
    bare.server.close();
    await api.stop();
    await env.close();
  }
}
