// The public error reference (/docs/errors.html), generated from the catalogue: one section per
// code with id="<code>", so every doc_url anchor lands on its row.
import { CATALOGUE, ERROR_TYPES, ERROR_CODES } from '../common/errors/catalogue';

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

/**
 * How the official client retries a code whose retry is more than resending the request (sdk/src/retry.ts
 * and the SDK README's table say the same).
 */
const HOW_RETRIED: Partial<Record<string, string>> = {
  offline_grace_expired:
    'yes — the official client validates online (<code>license.retrieve(token, { revalidate })</code>) and retries once with the fresh token; the same token alone fails again',
};

export function renderErrorsPage(): string {
  const families = ERROR_TYPES.map((type) => {
    const sections = ERROR_CODES.filter((code) => CATALOGUE[code].type === type)
      .map((code) => {
        const row = CATALOGUE[code];
        return `
    <section class="code" id="${code}">
      <h3><a href="#${code}"><code>${code}</code></a>${'added' in row ? ' <span class="tag">added</span>' : ''}</h3>
      <dl>
        <dt>Family (<code>type</code>)</dt><dd><code>${row.type}</code></dd>
        <dt>HTTP status</dt><dd>${row.status}</dd>
        <dt>Retryable</dt><dd>${row.retryable ? (HOW_RETRIED[code] ?? 'yes — the official client retries it automatically') : 'no — fix the cause first'}</dd>
        <dt>Condition</dt><dd>${escapeHtml(row.condition)}</dd>
        <dt>What to do</dt><dd>${escapeHtml(row.message)}</dd>
      </dl>
    </section>`;
      })
      .join('');
    return `\n  <h2 id="family-${type}">${type}</h2>${sections}`;
  }).join('');

  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>mediajobs — error reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <style>
    body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1f; }
    section.code { border: 1px solid #ddd; border-radius: 6px; padding: 0.5rem 1rem; margin: 0.75rem 0; }
    section.code:target { border-color: #d97706; box-shadow: 0 0 0 3px #fde68a; }
    dl { display: grid; grid-template-columns: 12rem 1fr; gap: 0.25rem 1rem; }
    dt { font-weight: 600; }
    .tag { font-size: 0.75rem; background: #eef; border-radius: 4px; padding: 0 0.4rem; }
  </style>
</head>
<body>
  <h1>Error reference</h1>
  <p>Every failure comes back as <code>{"error": {type, code, message, param, request_id, doc_url, retryable, details}}</code>
  with the HTTP status below. Branch on <code>type</code> first, then on <code>code</code>; codes never change meaning, and new
  ones may be added (treat an unknown code by its <code>type</code>). <code>message</code> is for people and may change.
  <code>request_id</code> equals the <code>X-Request-Id</code> response header.</p>
  <p><strong>Retryable</strong> follows the specification's SDK column: true exactly where the official client retries
  automatically. Codes marked <span class="tag">added</span> extend the specification's 45 for cases it does not cover.</p>${families}
</body>
</html>
`;
}
