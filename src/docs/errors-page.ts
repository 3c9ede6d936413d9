// The public error reference (/docs/errors.html), generated from the catalogue: one section per
// code with id="<code>", so every doc_url anchor lands on its row. A contents sidebar grouped by
// family with a filter box; per code its status, whether the client retries it, an example
// envelope and the fields of its `details`. One column on a phone. No request leaves the page.
import { CATALOGUE, ERROR_TYPES, ERROR_CODES, type ErrorCode } from '../common/errors/catalogue';
import { EXAMPLE_DOCS_URL, exampleError } from './api-error-responses';
import { ERROR_DETAILS, PARTIAL_FAILURE_DETAILS, type DetailsShape } from './error-details';

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

const FAMILY_SUMMARY: Record<(typeof ERROR_TYPES)[number], string> = {
  auth_error: 'The credential is missing, wrong, expired, revoked or lacks a scope.',
  billing_error: 'The account cannot pay for this job now (credits, spend cap, quota, plan, subscription).',
  rate_limit_error: 'Too many requests or jobs at once: wait and retry.',
  invalid_request_error: 'The request itself is wrong: fix it before sending it again.',
  resource_error: 'The thing named does not exist, or is not in a state that allows this.',
  processing_error: 'The media could not be processed (also the `error` of a failed job and of job.failed).',
  server_error: 'Our side failed or is unavailable: retry with backoff.',
  license_error: 'Plugin licence activation and validation.',
};

function clientBehaviour(code: ErrorCode): string {
  return CATALOGUE[code].retryable
    ? 'yes — the official client retries it automatically (exponential backoff with jitter, honouring Retry-After), up to maxRetries'
    : 'no — the official client raises it at once; fix the cause first';
}

function detailsTable(shape: DetailsShape | undefined): string {
  if (!shape) return '<p class="none">No <code>details</code>.</p>';
  const rows = shape.fields
    .map(
      (field) =>
        `<tr><td><code>${field.name}</code></td><td>${field.type}</td><td>${escapeHtml(field.description)}${
          field.optional ? ' <em>(not always present)</em>' : ''
        }</td><td>${field.spec ? 'spec §2.4' : 'ours'}</td></tr>`,
    )
    .join('');
  return `<div class="scroll"><table class="details"><thead><tr><th>Field</th><th>Type</th><th>Meaning</th><th>Source</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function example(code: ErrorCode, docsUrl: string): string {
  return `<pre class="example"><code>${escapeHtml(JSON.stringify(exampleError(code, docsUrl), null, 2))}</code></pre>`;
}

function codeSection(code: ErrorCode, docsUrl: string): string {
  const row = CATALOGUE[code];
  const search = `${code} ${row.type} ${row.status} ${row.condition}`.toLowerCase();
  return `
    <section class="code" id="${code}" data-search="${escapeHtml(search)}">
      <h3><a href="#${code}"><code>${code}</code></a> <span class="status">${row.status}</span>${'added' in row ? ' <span class="tag">added</span>' : ''}</h3>
      <dl>
        <dt>Family (<code>type</code>)</dt><dd><code>${row.type}</code></dd>
        <dt>HTTP status</dt><dd>${row.status}</dd>
        <dt>Retryable</dt><dd>${clientBehaviour(code)}</dd>
        <dt>Condition</dt><dd>${escapeHtml(row.condition)}</dd>
        <dt>What to do</dt><dd>${escapeHtml(row.message)}</dd>
      </dl>
      <h4><code>details</code></h4>
      ${detailsTable(ERROR_DETAILS[code])}
      <details class="example-box"><summary>Example response body</summary>${example(code, docsUrl)}</details>
    </section>`;
}

export function renderErrorsPage(docsUrl = EXAMPLE_DOCS_URL): string {
  const codesOf = (type: string) => ERROR_CODES.filter((code) => CATALOGUE[code].type === type);
  const contents = ERROR_TYPES.map(
    (type) => `
      <li class="toc-family" data-family="${type}"><a href="#family-${type}">${type}</a>
        <ul>${codesOf(type)
          .map(
            (code) =>
              `<li data-search="${escapeHtml(`${code} ${type} ${CATALOGUE[code].status} ${CATALOGUE[code].condition}`.toLowerCase())}"><a href="#${code}">${code}</a> <span class="status">${CATALOGUE[code].status}</span></li>`,
          )
          .join('')}</ul>
      </li>`,
  ).join('');
  const families = ERROR_TYPES.map(
    (type) => `
  <section class="family" id="family-${type}">
    <h2>${type}</h2>
    <p>${escapeHtml(FAMILY_SUMMARY[type])}</p>${codesOf(type)
      .map((code) => codeSection(code, docsUrl))
      .join('')}
  </section>`,
  ).join('');

  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>mediajobs — error reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <style>
    * { box-sizing: border-box; }
    body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1f; background: #fff; }
    header { padding: 1rem 1.25rem 0.5rem; border-bottom: 1px solid #e5e5ea; }
    h1 { margin: 0.25rem 0; font-size: 1.6rem; }
    .layout { display: grid; grid-template-columns: 17rem minmax(0, 1fr); }
    nav.toc { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow-y: auto; padding: 1rem;
      border-right: 1px solid #e5e5ea; background: #fafafa; font-size: 0.9rem; }
    nav.toc ul { list-style: none; margin: 0; padding: 0; }
    nav.toc ul ul { margin: 0.2rem 0 0.6rem 0.6rem; }
    nav.toc li li { padding: 0.1rem 0; }
    nav.toc .toc-family > a { font-weight: 700; color: #1b1b1f; }
    nav.toc a { text-decoration: none; color: #1d4ed8; overflow-wrap: anywhere; }
    label.filter { display: block; font-weight: 600; margin-bottom: 0.25rem; }
    input[type=search] { width: 100%; font: inherit; padding: 0.45rem 0.6rem; margin-bottom: 0.75rem;
      border: 1px solid #b8b8c0; border-radius: 6px; }
    main { padding: 0 1.25rem 3rem; min-width: 0; max-width: 60rem; }
    section.code { border: 1px solid #ddd; border-radius: 6px; padding: 0.5rem 1rem; margin: 0.75rem 0; scroll-margin-top: 0.75rem; }
    section.code:target { border-color: #d97706; box-shadow: 0 0 0 3px #fde68a; }
    section.code h3 { margin: 0.4rem 0; overflow-wrap: anywhere; }
    h4 { margin: 0.75rem 0 0.25rem; font-size: 0.95rem; }
    dl { display: grid; grid-template-columns: 11rem minmax(0, 1fr); gap: 0.25rem 1rem; margin: 0.5rem 0; }
    dt { font-weight: 600; }
    dd { margin: 0; }
    .status { font-size: 0.75rem; background: #f1f1f4; border-radius: 4px; padding: 0 0.35rem; font-weight: 400; }
    .tag { font-size: 0.75rem; background: #eef; border-radius: 4px; padding: 0 0.4rem; font-weight: 400; }
    .scroll { overflow-x: auto; }
    table.details { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
    table.details th, table.details td { text-align: left; border-top: 1px solid #eee; padding: 0.25rem 0.5rem 0.25rem 0; vertical-align: top; }
    pre.example { background: #f6f8fa; border-radius: 6px; padding: 0.6rem 0.8rem; overflow-x: auto; font-size: 0.8rem;
      white-space: pre-wrap; overflow-wrap: anywhere; }
    summary { cursor: pointer; color: #1d4ed8; margin: 0.5rem 0; }
    .none { color: #555; margin: 0.25rem 0; }
    [hidden] { display: none !important; }
    @media (max-width: 50rem) {
      .layout { display: block; }
      nav.toc { position: static; max-height: none; border-right: 0; border-bottom: 1px solid #e5e5ea; }
      nav.toc > ul { max-height: 40vh; overflow-y: auto; }
      dl { grid-template-columns: 1fr; }
      dt { margin-top: 0.35rem; }
      main { padding: 0 0.75rem 3rem; }
      section.code { padding: 0.5rem 0.75rem; }
    }
  </style>
</head>
<body>
  <header>
    <h1>Error reference</h1>
  </header>
  <div class="layout">
  <nav class="toc" aria-label="Error codes by family">
    <label class="filter" for="filter">Filter codes</label>
    <input id="filter" type="search" placeholder="e.g. credits, 429, webhook" autocomplete="off">
    <p id="filter-empty" class="none" hidden>No code matches.</p>
    <ul>${contents}
    </ul>
  </nav>
  <main>
  <p>Every failure comes back as <code>{"error": {type, code, message, param, request_id, doc_url, retryable, details}}</code>
  with the HTTP status below. Branch on <code>type</code> first, then on <code>code</code>; codes never change meaning, and new
  ones may be added (treat an unknown code by its <code>type</code>). <code>message</code> is for people and may change.
  <code>request_id</code> equals the <code>X-Request-Id</code> response header. A failed job's <code>error</code> and the
  <code>data.error</code> of its webhook event are the same object.</p>
  <p><strong>Retryable</strong> follows the specification's SDK column: true exactly where the official client retries
  automatically. Codes marked <span class="tag">added</span> extend the specification's 45 for cases it does not cover.
  <code>details</code> fields marked <em>spec §2.4</em> are the specification's; the others are this service's.</p>
  <section class="partial" id="partial-failure">
    <h2>Partial failure</h2>
    <p>When some items of a job fail and others succeed (<code>partially_succeeded</code>), the job's <code>error</code> has the
    code of the first failed item, and its <code>details</code> carry the pro-rata settlement:</p>
    ${detailsTable(PARTIAL_FAILURE_DETAILS)}
  </section>${families}
  </main>
  </div>
  <script>
    (function () {
      var input = document.getElementById('filter');
      var empty = document.getElementById('filter-empty');
      function apply() {
        var words = input.value.toLowerCase().split(/\\s+/).filter(Boolean);
        var matches = function (element) {
          var text = element.getAttribute('data-search') || '';
          return words.every(function (word) { return text.indexOf(word) !== -1; });
        };
        var shown = 0;
        document.querySelectorAll('[data-search]').forEach(function (element) {
          var ok = matches(element);
          element.hidden = !ok;
          if (ok && element.tagName === 'SECTION') shown++;
        });
        document.querySelectorAll('.toc-family').forEach(function (family) {
          family.hidden = !family.querySelector('li[data-search]:not([hidden])');
        });
        document.querySelectorAll('section.family').forEach(function (family) {
          family.hidden = !family.querySelector('section.code:not([hidden])');
        });
        empty.hidden = shown > 0;
      }
      input.addEventListener('input', apply);
    })();
  </script>
</body>
</html>
`;
}
