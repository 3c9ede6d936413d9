// How the reference pages reach a browser: the page carries its document, Swagger UI's files come
// from this server only (nothing else of swagger-ui-dist, no third-party host), each cached for good
// under a versioned URL and gzipped for a client that takes it; the page itself is revalidated.
import { get, type IncomingMessage } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { swaggerUiPage } from '../../src/docs/swagger-ui-page';
import { startApi, type TestApi } from '../support/app';

/** The src/href of every <script> and <link> of a page. */
const assetUrls = (html: string): string[] =>
  [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]);

/** The JSON data block that carries the document. */
const embeddedDocument = (html: string): unknown =>
  JSON.parse(/<script id="reference" type="application\/json">([\s\S]*?)<\/script>/.exec(html)![1]);

describe('the Swagger UI pages', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  it.each(['/docs', '/docs/operator'])(
    '%s carries the 3.0 rendition of its reference and loads only Swagger UI and its start script from this server',
    async (path) => {
      const response = await fetch(`${api.url}${path}`);
      expect([response.status, response.headers.get('cache-control')]).toEqual([200, 'no-cache']);
      const html = await response.text();
      const published = (await (await fetch(`${api.url}${path}/openapi.json`)).json()) as { paths: object };
      const drawn = embeddedDocument(html) as { openapi: string; paths: object };
      expect([drawn.openapi, Object.keys(drawn.paths)]).toEqual(['3.0.3', Object.keys(published.paths)]);

      const urls = assetUrls(html);
      expect(urls.map((url) => url.replace(/\?v=[\w-]+$/, '?v=…'))).toEqual([
        '/docs/swagger-ui/swagger-ui.css?v=…',
        '/docs/swagger-ui/favicon-32x32.png?v=…',
        '/docs/swagger-ui/favicon-16x16.png?v=…',
        '/docs/swagger-ui/swagger-ui-bundle.js?v=…',
        '/docs/swagger-ui/mediajobs-init.js?v=…',
      ]);
      // Revalidation of an unchanged page costs no body.
      const again = await fetch(`${api.url}${path}`, { headers: { 'if-none-match': response.headers.get('etag')! } });
      expect(again.status).toBe(304);
    },
  );

  it("Swagger UI's files are cached for good, gzipped for a client that takes it, and nothing else of swagger-ui-dist is served", async () => {
    const html = await (await fetch(`${api.url}/docs`)).text();
    const bundleUrl = assetUrls(html).find((url) => url.includes('swagger-ui-bundle.js'))!;
    const plain = await fetch(`${api.url}${bundleUrl}`, { headers: { 'accept-encoding': 'identity' } });
    const body = Buffer.from(await plain.arrayBuffer());
    expect([plain.status, plain.headers.get('cache-control'), plain.headers.get('content-type')]).toEqual([
      200,
      'public, max-age=31536000, immutable',
      'text/javascript; charset=utf-8',
    ]);
    expect(body.toString('utf8')).toContain('SwaggerUIBundle');

    // fetch() would unzip on its own: read the raw bytes through node:http's defaults instead.
    const zipped = await new Promise<{ encoding?: string; bytes: Buffer }>((resolve, reject) => {
      get(`${api.url}${bundleUrl}`, { headers: { 'accept-encoding': 'gzip' } }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], bytes: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(zipped.encoding).toBe('gzip');
    expect(zipped.bytes.length).toBeLessThan(body.length / 2);
    expect(gunzipSync(zipped.bytes).equals(body)).toBe(true);

    for (const path of [
      '/docs/swagger-ui/index.html',
      '/docs/swagger-ui/swagger-initializer.js',
      '/docs/swagger-ui/..%2Fpackage.json',
    ]) {
      const response = await fetch(`${api.url}${path}`);
      expect([path, response.status]).toEqual([path, 404]);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('route_not_found');
    }
  });

  it('no text of a document can end its data block early', () => {
    const document = { info: { description: '</script><script>alert(1)</script> <!-- & -->' } };
    const html = swaggerUiPage('t', document);
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(embeddedDocument(html)).toEqual(document);
  });
});
