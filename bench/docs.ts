// How long the API reference takes to show its operations in a browser: Debian's Chromium (headless,
// through playwright-core) opens our /docs page with an empty cache and the time from navigation to
// the moment every operation of the document is on the page is read from the page's own clock.
// Bare: the same Swagger UI (swagger-ui-dist, the copy the API serves) on a static page, with its default
// options, given the very document our page draws (the reference's 3.0 rendition, taken from the page):
// what Swagger UI itself costs to draw our reference, so the ratio is what our page adds (issue 42 item 11:
// within 1.15×). The one-operation page of before (Swagger UI's start alone) is still timed, for the record.
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
import { SWAGGER_UI_OPTIONS } from '../src/docs/swagger-ui-page';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium';

/** Our page may take at most this much longer than bare Swagger UI drawing the same document (issue 42 item 11). */
const TARGET_RATIO = 1.15;
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

/** The document our page hands Swagger UI: the JSON data block of its HTML (the reference's 3.0 rendition). */
export function embeddedReference(html: string): object {
  const block = /<script id="reference" type="application\/json">([\s\S]*?)<\/script>/.exec(html);
  if (!block) throw new Error('the /docs page has no reference data block');
  return JSON.parse(block[1]) as object;
}

export async function benchDocs(context: BenchContext): Promise<BenchResult> {
  const runs = context.quick ? 3 : 7;
  const env = await createEnvironment('docs');
  // Judged on the reader's wait (wall time) relative to bare Swagger UI timed alternately in the same browser,
  // so the shared machine's load stretches both sides alike; the renderer's CPU time is reported beside it.
  const loadAtStart = loadavg()[0];
  const api = await startProcess('dist/src/main.js', env.serviceEnv);
  const start = await bareSwaggerUi();
  const browser = await launchBrowser();
  let bare: Awaited<ReturnType<typeof bareSwaggerUi>> | undefined;
  let bareOurOptions: Awaited<ReturnType<typeof bareSwaggerUi>> | undefined;
  try {
    const documentText = await (await fetch(`${api.url}/docs/openapi.json`)).text();
    const operations = operationCount(JSON.parse(documentText) as Parameters<typeof operationCount>[0]);
    const drawn = embeddedReference(await (await fetch(`${api.url}/docs`)).text());
    if (operationCount(drawn as Parameters<typeof operationCount>[0]) !== operations)
      throw new Error('the page draws another number of operations than /docs/openapi.json has');
    bare = await bareSwaggerUi(drawn);
    // The same, with our page's options: what is left between it and our page is the page itself.
    bareOurOptions = await bareSwaggerUi(drawn, { ...SWAGGER_UI_OPTIONS });
    const ours: RenderTime[] = [];
    const baseline: RenderTime[] = [];
    const withOurOptions: RenderTime[] = [];
    const startOnly: RenderTime[] = [];
    // Alternated, so a load spike on the shared machine hits every side alike.
    for (let run = 0; run < runs; run++) {
      ours.push(await timeToOperations(browser, `${api.url}/docs`, operations));
      baseline.push(await timeToOperations(browser, bare.url, operations));
      withOurOptions.push(await timeToOperations(browser, bareOurOptions.url, operations));
      startOnly.push(await timeToOperations(browser, start.url, 1));
      context.log(
        `run ${run + 1}: ours ${round(ours[run].wallMs)} ms wall (${round(ours[run].cpuMs)} ms CPU), ` +
          `bare with our document ${round(baseline[run].wallMs)} ms (${round(baseline[run].cpuMs)} ms CPU), ` +
          `and our options ${round(withOurOptions[run].wallMs)} ms (${round(withOurOptions[run].cpuMs)} ms CPU), ` +
          `bare with one operation ${round(startOnly[run].wallMs)} ms`,
      );
    }
    const busy = ours.map((time) => time.cpuMs);
    const waits = ours.map((time) => time.wallMs);
    return compare(
      'docs',
      `Swagger UI at /docs shows all ${operations} operations of /docs/openapi.json (${Math.round(documentText.length / 1024)} KB) in Chromium, cold cache: wall time by the page's clock; bare: the same Swagger UI, default options, on a static page given the document our page draws`,
      {
        metric: 'ms to operations rendered',
        ours: waits,
        bare: baseline.map((time) => time.wallMs),
        higherIsBetter: false,
      },
      { text: `≤ ${TARGET_RATIO}× bare Swagger UI given our document`, met: (ratio) => ratio <= TARGET_RATIO },
      {
        operations,
        document_bytes: documentText.length,
        cpu_median_ms: round(median(busy)),
        wall_median_ms: round(median(waits)),
        bare_wall_median_ms: round(median(baseline.map((time) => time.wallMs))),
        bare_cpu_median_ms: round(median(baseline.map((time) => time.cpuMs))),
        bare_our_options_wall_median_ms: round(median(withOurOptions.map((time) => time.wallMs))),
        bare_our_options_cpu_median_ms: round(median(withOurOptions.map((time) => time.cpuMs))),
        one_operation_wall_median_ms: round(median(startOnly.map((time) => time.wallMs))),
        load_average_1m: round(loadAtStart),
        target_ratio: TARGET_RATIO,
      },
    );
  } finally {
    await browser.close();
    start.server.close();
    bare?.server.close();
    bareOurOptions?.server.close();
    await api.stop();
    await env.close();
  }
}
