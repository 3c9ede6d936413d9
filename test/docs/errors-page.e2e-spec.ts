// The public error reference (/docs/errors.html): one section per catalogue code, each anchor the
// target of that code's doc_url.
import { CATALOGUE, ERROR_CODES } from '../../src/common/errors/catalogue';
import { call, startApi, type TestApi } from '../support/app';

const decode = (html: string): string =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** The <dt>/<dd> pairs of one code's section, as text. */
function fields(section: string): Record<string, string> {
  const pairs = [...section.matchAll(/<dt>([\s\S]*?)<\/dt>\s*<dd>([\s\S]*?)<\/dd>/g)];
  return Object.fromEntries(pairs.map(([, term, value]) => [decode(term), decode(value)]));
}

describe('error reference at /docs/errors.html', () => {
  let api: TestApi;
  let html: string;

  beforeAll(async () => {
    api = await startApi();
    const response = await fetch(`${api.url}/docs/errors.html`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    html = await response.text();
  });
  afterAll(() => api.close());

  it('has exactly one element per catalogue code, with id="<code>"', () => {
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map(([, id]) => id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const code of ERROR_CODES)
      expect({ code, count: ids.filter((id) => id === code).length }).toEqual({ code, count: 1 });
    expect(html.match(/<section class="code" id="/g)).toHaveLength(ERROR_CODES.length);
  });

  it('shows family, status, retryable, condition and what to do for every code', () => {
    for (const code of ERROR_CODES) {
      const row = CATALOGUE[code];
      const section = new RegExp(`<section class="code" id="${code}">([\\s\\S]*?)</section>`).exec(html)?.[1];
      expect({ code, found: Boolean(section) }).toEqual({ code, found: true });
      const shown = fields(section!);
      expect({ code, ...shown }).toEqual({
        code,
        'Family (type)': row.type,
        'HTTP status': String(row.status),
        Retryable: expect.stringMatching(row.retryable ? /^yes\b/ : /^no\b/),
        Condition: row.condition,
        'What to do': row.message,
      });
      // Codes added beyond the specification's 45 say so.
      expect({ code, added: section!.includes('class="tag">added<') }).toEqual({ code, added: 'added' in row });
    }
  });

  it('is where a real error points: doc_url ends in #<code> of this page', async () => {
    const response = await call(api, 'GET', '/v1/account/credits');
    expect(response.status).toBe(401);
    const docUrl = new URL(response.body.error.doc_url);
    expect(`${docUrl.origin}${docUrl.pathname}`).toBe(`${api.config.docsUrl}/errors.html`);
    expect(docUrl.hash).toBe('#missing_api_key');
    expect(html).toContain(`id="${docUrl.hash.slice(1)}"`);
  });
});
