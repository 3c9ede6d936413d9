// The one owner of the headers that protect what a browser renders. Every HTML page — the dashboard,
// Swagger UI, the error reference, the queue board and its sign-in page — gets the same set: a
// Content-Security-Policy that allows this origin only and no framing, X-Frame-Options, nosniff, a
// same-origin referrer and opener policy. Inline <script>/<style> blocks and style attributes a page
// carries (Swagger UI's template, the error reference's filter) are allowed by their SHA-256 hashes,
// computed from the page itself, never by 'unsafe-inline'. Every response gets nosniff, and HSTS in
// production when PUBLIC_BASE_URL is https (the TLS proxy in front is what the browser talks to).
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import type { AppConfig } from '../config/config';

const BASE_CSP: Record<string, string[]> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  // The job page plays HLS packages through Media Source Extensions: the <video> plays a blob: URL.
  'media-src': ["'self'", 'blob:'],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/** Two years, subdomains included; preloading is the operator's decision. */
const HSTS = 'max-age=63072000; includeSubDomains';

const HTML_HEADERS = {
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The page may use inline styles ('unsafe-inline', styles only; its scripts stay this origin's
     * files). Only Swagger UI's pages declare it: its script applies inline styles it builds at run
     * time, which no hash can name.
     */
    inlineStyles?: boolean;
  }
}

/** The policy for one page: the base, plus a hash for each inline block and style attribute it holds. */
export function contentSecurityPolicy(html = '', options: { inlineStyles?: boolean } = {}): string {
  const directives: Record<string, string[]> = Object.fromEntries(
    Object.entries(BASE_CSP).map(([name, sources]) => [name, [...sources]]),
  );
  const scripts = [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]);
  const styles = [...html.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style>/gi)].map((m) => m[1]);
  const attributes = [...html.matchAll(/\sstyle="([^"]*)"/gi)].map((m) => m[1]);
  directives['script-src'].push(...new Set(scripts.map(hash)));
  // A page that sets its own <base> (the queue board's app resolves its files against it) may name this origin.
  if (/<base\b/i.test(html)) directives['base-uri'] = ["'self'"];
  if (options.inlineStyles) {
    // With a hash present a browser ignores 'unsafe-inline': none is listed.
    directives['style-src'].push("'unsafe-inline'");
  } else {
    directives['style-src'].push(...new Set(styles.map(hash)));
    // Hashes of style attributes are honoured only with 'unsafe-hashes' (CSP level 3), and only for them.
    if (attributes.length) directives['style-src-attr'] = ["'unsafe-hashes'", ...new Set(attributes.map(hash))];
  }
  return Object.entries(directives)
    .map(([name, sources]) => `${name} ${sources.join(' ')}`)
    .join('; ');
}

/** Pages are few and fixed: their policies are computed once each. */
const POLICY_CACHE_MAX = 64;

export function registerSecurityHeaders(fastify: FastifyInstance, config: AppConfig): void {
  const hsts = config.nodeEnv === 'production' && config.publicBaseUrl.startsWith('https:');
  const policies = new Map<string, string>();
  const policyFor = (html: string, inlineStyles: boolean): string => {
    const key = `${inlineStyles ? 1 : 0}${html}`;
    let policy = policies.get(key);
    if (policy === undefined) {
      policy = contentSecurityPolicy(html, { inlineStyles });
      if (policies.size >= POLICY_CACHE_MAX) policies.delete(policies.keys().next().value!);
      policies.set(key, policy);
    }
    return policy;
  };
  fastify.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('X-Content-Type-Options', 'nosniff');
    if (hsts) void reply.header('Strict-Transport-Security', HSTS);
    if (/^text\/html\b/i.test(String(reply.getHeader('content-type') ?? ''))) {
      // A body sent as bytes (Swagger UI's pages, gzipped or not) carries no inline script to hash: the
      // base policy, which runs only this origin's scripts (the pages' JSON data block is not run).
      const html = typeof payload === 'string' ? payload : '';
      const inlineStyles = request.routeOptions.config?.inlineStyles === true;
      void reply.headers({ 'Content-Security-Policy': policyFor(html, inlineStyles), ...HTML_HEADERS });
    }
    done(null, payload);
  });
}
