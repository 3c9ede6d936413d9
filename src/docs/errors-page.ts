// The public error reference (/docs/errors.html), written for the people who call the API (Stripe's
// error reference is the model): how errors look and how to handle them; per family what happened,
// what to do and an example body; per code (one section with id="<code>", where every doc_url
// lands) what happened, what to do, whether a retry can help and the fields of its `details`. A
// contents sidebar with a filter box; one column on a phone; no request leaves the page.
import { CATALOGUE, ERROR_TYPES, ERROR_CODES, type ErrorCode } from '../common/errors/catalogue';
import { EXAMPLE_DOCS_URL, exampleError } from '../common/openapi/api-error-responses';
import { ERROR_DETAILS, PARTIAL_FAILURE_DETAILS, type DetailsShape } from '../common/openapi/error-details';

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

interface Family {
  title: string;
  happened: string;
  todo: string;
  /** The code whose example body stands for the family. */
  example: ErrorCode;
}

const FAMILIES: Record<(typeof ERROR_TYPES)[number], Family> = {
  auth_error: {
    title: 'Authentication',
    happened:
      'The request carried no API key, or one that is wrong, expired or revoked, or one without the scope this call needs; or the account is suspended.',
    todo: 'Check the X-API-Key header and the key’s scopes in the dashboard. Retrying the same request will not help.',
    example: 'missing_api_key',
  },
  billing_error: {
    title: 'Billing',
    happened:
      'The account cannot pay for this job now: not enough credits, the monthly spend limit or quota reached, a plan without this API or output, or a payment problem.',
    todo: 'Read `details` for the numbers (credits needed and available, the limit and when it resets), add credits or change the limit or plan, then submit again. Nothing was charged.',
    example: 'insufficient_credits',
  },
  rate_limit_error: {
    title: 'Rate limits',
    happened: 'Too many requests in a short time, too many jobs at once for the plan, or the queue is full.',
    todo: 'Wait for `Retry-After` seconds (also in `details.retry_after_seconds` where given) and send the same request again, with the same Idempotency-Key.',
    example: 'rate_limit_exceeded',
  },
  invalid_request_error: {
    title: 'Invalid requests',
    happened:
      'Something in the request is wrong: a missing or invalid field, a source that cannot be used, a file that is too large or in an unsupported format.',
    todo: '`param` names the field at fault (for example `inputs[0].source_url`). Fix it and send the request again; the same request will fail the same way.',
    example: 'invalid_parameter',
  },
  resource_error: {
    title: 'Resources',
    happened:
      'The job, asset or other object named does not exist for this account, or is not in a state that allows the call (a finished job cannot be cancelled).',
    todo: 'Check the id; read the object again to see its state.',
    example: 'job_not_found',
  },
  processing_error: {
    title: 'Processing',
    happened:
      'A job (or one of its items) could not be processed. This is also the `error` of a failed job and of its `job.failed` webhook event.',
    todo: 'The code says why. Retryable codes can succeed on a new submit; for the others, change the input first. A failed job is not charged.',
    example: 'processing_failed',
  },
  server_error: {
    title: 'Service',
    happened:
      'Something went wrong on our side, or the service is briefly unavailable (maintenance, a region without workers).',
    todo: 'Retry with exponential backoff. If it persists, contact support with the `request_id`.',
    example: 'service_unavailable',
  },
  license_error: {
    title: 'Plugin licences',
    happened:
      'A plugin licence could not be activated or validated: unknown or expired licence, too many devices, or a device that must validate online again.',
    todo: 'Check the licence key and its devices in the dashboard; for `offline_grace_expired`, validate online and use the fresh token.',
    example: 'license_invalid',
  },
};

/** Inline Markdown-ish code spans (`x`) as <code>, the rest escaped. */
const prose = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/**
 * How the official client retries a code whose retry is more than resending the request (sdk/src/retry.ts
 * and the SDK README's table say the same).
 */
const HOW_RETRIED: Partial<Record<ErrorCode, string>> = {
  offline_grace_expired:
    'yes, after validating online: the official client does it for you (<code>license.retrieve(token, { revalidate })</code>) and retries once with the fresh token; the same token alone fails again',
};

function clientBehaviour(code: ErrorCode): string {
  const special = HOW_RETRIED[code];
  if (special) return special;
  return CATALOGUE[code].retryable
    ? 'yes: the same request can succeed later; the official client retries it for you (exponential backoff, honouring Retry-After)'
    : 'no: the same request will fail the same way; fix the cause first';
}

function detailsTable(shape: DetailsShape | undefined): string {
  if (!shape) return '<p class="none">No <code>details</code>.</p>';
  const rows = shape.fields
    .map(
      (field) =>
        `<tr><td><code>${field.name}</code></td><td>${field.type}</td><td>${escapeHtml(field.description)}${
          field.optional ? ' <em>(not always present)</em>' : ''
        }</td></tr>`,
    )
    .join('');
  return `<div class="scroll"><table class="details"><thead><tr><th>Field</th><th>Type</th><th>Meaning</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function example(code: ErrorCode, docsUrl: string): string {
  return `<pre class="example"><code>${escapeHtml(JSON.stringify(exampleError(code, docsUrl), null, 2))}</code></pre>`;
}

function codeSection(code: ErrorCode, docsUrl: string): string {
  const row = CATALOGUE[code];
  const search = `${code} ${row.type} ${row.status} ${row.condition}`.toLowerCase();
  return `
    <section class="code" id="${code}" data-search="${escapeHtml(search)}">
      <h3><a href="#${code}"><code>${code}</code></a> <span class="status">${row.status}</span></h3>
      <dl>
        <dt>What happened</dt><dd>${escapeHtml(row.condition)}</dd>
        <dt>What to do</dt><dd>${escapeHtml(row.message)}</dd>
        <dt>Retry</dt><dd>${clientBehaviour(code)}</dd>
        <dt>HTTP status</dt><dd>${row.status}</dd>
        <dt>Type</dt><dd><code>${row.type}</code></dd>
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
  const families = ERROR_TYPES.map((type) => {
    const family = FAMILIES[type];
    return `
  <section class="family" id="family-${type}">
    <h2>${family.title} <code class="type">${type}</code></h2>
    <dl class="family-summary">
      <dt>What happened</dt><dd>${prose(family.happened)}</dd>
      <dt>What to do</dt><dd>${prose(family.todo)}</dd>
    </dl>
    <p class="example-label">Example: <code>${family.example}</code>, HTTP ${CATALOGUE[family.example].status}</p>
    ${example(family.example, docsUrl)}${codesOf(type)
      .map((code) => codeSection(code, docsUrl))
      .join('')}
  </section>`;
  }).join('');

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
    .lead { margin: 0 0 0.5rem; color: #444; }
    code.type { font-size: 0.8rem; font-weight: 400; color: #555; }
    .example-label { margin: 0.5rem 0 0.25rem; font-weight: 600; }
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
    <h1>Errors</h1>
    <p class="lead">What each error means and what to do about it. The <a href="./">API reference</a> lists which errors each call can return.</p>
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
  <p>When a request fails, the response has an HTTP status of 400 or more and a JSON body with one
  <code>error</code> object:</p>
  <div class="scroll"><table class="details"><thead><tr><th>Field</th><th>Meaning</th></tr></thead><tbody>
    <tr><td><code>type</code></td><td>The family of the error (below). Branch on it first.</td></tr>
    <tr><td><code>code</code></td><td>What exactly went wrong. A code never changes meaning; new codes may appear, so treat one you do not know by its <code>type</code>.</td></tr>
    <tr><td><code>message</code></td><td>What to do, for people. It may be reworded: do not parse it.</td></tr>
    <tr><td><code>param</code></td><td>The request field at fault, as a path such as <code>inputs[0].source_url</code>; <code>null</code> when no single field is.</td></tr>
    <tr><td><code>request_id</code></td><td>Identifies this request (also the <code>X-Request-Id</code> header). Quote it when you contact support.</td></tr>
    <tr><td><code>doc_url</code></td><td>This page, at the code’s section.</td></tr>
    <tr><td><code>retryable</code></td><td><code>true</code> when sending the same request again later can succeed.</td></tr>
    <tr><td><code>details</code></td><td>Facts of some codes (credits needed, the limit and when it resets, …), listed with each code.</td></tr>
  </tbody></table></div>
  <h2 id="handling">Handling errors</h2>
  <ul>
    <li>Retry only when <code>retryable</code> is <code>true</code>, with exponential backoff, and wait at least <code>Retry-After</code> seconds when the response has that header.</li>
    <li>Send a retried POST with the same <code>Idempotency-Key</code>: a job is never created twice, and the retry gets the first answer.</li>
    <li>A failed job carries the same <code>error</code> object, and so does the <code>data.error</code> of its webhook event. Failed jobs are not charged; a cancelled job is charged only for the items it delivered before the cancel.</li>
    <li>The official client does all of this for you and raises one error class per <code>type</code>.</li>
  </ul>
  <section class="partial" id="partial-failure">
    <h2>Partial failure</h2>
    <p>When some items of a job fail and others succeed (<code>partially_succeeded</code>), the job’s <code>error</code> has the
    code of the first failed item, and its <code>details</code> say what was charged: only the items that succeeded.</p>
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
