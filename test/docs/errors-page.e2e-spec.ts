// The public error reference (/docs/errors.html): one section per catalogue code, each anchor the
// target of that code's doc_url.
import { CATALOGUE, ERROR_CODES, ERROR_TYPES, type ErrorCode } from '../../src/common/errors/catalogue';
import { ERROR_DETAILS } from '../../src/common/openapi/error-details';
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
  const sectionOf = (code: string): string | undefined =>
    new RegExp(`<section class="code" id="${code}"[^>]*>([\\s\\S]*?)</section>`).exec(html)?.[1];

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

  it('shows what happened, what to do, whether to retry, the status and the type for every code', () => {
    for (const code of ERROR_CODES) {
      const row = CATALOGUE[code];
      const section = sectionOf(code);
      expect({ code, found: Boolean(section) }).toEqual({ code, found: true });
      const shown = fields(section!);
      expect({ code, ...shown }).toEqual({
        code,
        'What happened': row.condition,
        'What to do': row.message,
        Retry: expect.stringMatching(row.retryable ? /^yes\b/ : /^no\b/),
        'HTTP status': String(row.status),
        Type: row.type,
      });
    }
  });

  it('speaks to customers: none of the words of our own design notes', () => {
    const text = decode(html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, ''));
    const internal = [
      /specification/i,
      /\bspec\b/i,
      /§/,
      /\bours\b/,
      /API\.md/,
      /catalogue/i,
      /\badded\b/i,
      /SDK column/i,
    ];
    expect(internal.filter((phrase) => phrase.test(text)).map(String)).toEqual([]);
  });

  it('explains each family (what happened, what to do) with an example body of one of its codes', () => {
    for (const type of ERROR_TYPES) {
      const family = new RegExp(`<section class="family" id="family-${type}">([\\s\\S]*?)<section class="code"`).exec(
        html,
      )?.[1];
      expect({ type, found: Boolean(family) }).toEqual({ type, found: true });
      const summary = fields(family!);
      expect(Object.keys(summary)).toEqual(['What happened', 'What to do']);
      const json = /<pre class="example"><code>([\s\S]*?)<\/code><\/pre>/.exec(family!)?.[1];
      const { error } = JSON.parse(decode(json ?? '{}')) as { error: { type: string; code: ErrorCode } };
      expect({ type, example: error.type }).toEqual({ type, example: type });
      expect(CATALOGUE[error.code].type).toBe(type);
    }
  });

  it('gives every code an example envelope and the fields of its details', () => {
    for (const code of ERROR_CODES) {
      const section = sectionOf(code)!;
      const json = /<pre class="example"><code>([\s\S]*?)<\/code><\/pre>/.exec(section)?.[1];
      const envelope = JSON.parse(decode(json ?? '{}')) as { error: Record<string, unknown> };
      const row = CATALOGUE[code];
      expect({ code, ...envelope.error }).toMatchObject({
        code,
        type: row.type,
        retryable: row.retryable,
        doc_url: `${api.config.docsUrl}/errors.html#${code}`,
      });
      const shape = ERROR_DETAILS[code];
      const listed = [...section.matchAll(/<tr><td><code>([a-z_]+)<\/code>/g)].map(([, name]) => name);
      expect({ code, listed }).toEqual({ code, listed: shape?.fields.map((field) => field.name) ?? [] });
      if (shape) expect({ code, details: envelope.error.details }).toEqual({ code, details: shape.example });
    }
    // The specification's section 2.4 shapes, by name.
    const spec = (code: ErrorCode) => ERROR_DETAILS[code]!.fields.filter((f) => f.spec).map((f) => f.name);
    expect(spec('insufficient_credits')).toEqual(['required_credits', 'available_credits']);
    expect(spec('spend_limit_exceeded')).toEqual(['spend_limit_usd', 'spent_usd', 'reset_at']);
    expect(spec('rate_limit_exceeded')).toEqual(['limit', 'window_seconds', 'retry_after_seconds']);
    expect(spec('concurrency_limit_exceeded')).toEqual(['concurrency_limit', 'running_jobs']);
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
