// The two API references cut from the one document the controllers describe: customers' (what an API
// key can call, and the licence and signed-link routes their software calls without one) and
// operators' (the admin token, the dashboard's own sign-in, members and session routes, health). Each
// keeps only the tags and components its operations use, so a reader (and Swagger UI) gets no more
// than is theirs.
import type { OpenAPIObject, OperationObject, PathItemObject } from '@nestjs/swagger';
import { createHash } from 'node:crypto';

export type Audience = 'customer' | 'operator';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Public routes that customers' own software calls: the plugin's licence calls and the output links. */
const CUSTOMER_PUBLIC_TAGS = ['license', 'assets'];

/** Who an operation is documented for, from the credentials it takes (completeOperation set them). */
export function audienceOf(operation: OperationObject): Audience {
  const security = operation.security ?? [];
  if (security.some((requirement) => 'api_key' in requirement)) return 'customer';
  if (security.length === 0 && (operation.tags ?? []).some((tag) => CUSTOMER_PUBLIC_TAGS.includes(tag)))
    return 'customer';
  return 'operator';
}

const TITLES: Record<Audience, { title: string; description: (docsUrl: string) => string }> = {
  customer: {
    title: 'mediajobs API',
    description: (docsUrl) =>
      'Paid asynchronous media-processing jobs (SDR→HDR10, speech loudness) and a plugin licence service, ' +
      'called with an API key (`X-API-Key`). Every error is the envelope in `ErrorEnvelope`, with the HTTP ' +
      `status of its code; branch on \`error.type\`, then on \`error.code\`. See the [error reference](${docsUrl}/errors.html).`,
  },
  operator: {
    title: 'mediajobs operator API',
    description: (docsUrl) =>
      'For the people who run the service: accounts, credits, plans, maintenance and blocked content ' +
      '(`X-Admin-Token`), the dashboard’s sign-in, members and sessions, and the health probes. Customers ' +
      `call the [API reference](${docsUrl}); errors are the same envelope ([error reference](${docsUrl}/errors.html)).`,
  },
};

/** Every `#/components/<kind>/<name>` reachable from `root`, following references inside components too. */
function reachableComponents(document: OpenAPIObject, root: unknown): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const components = document.components as Record<string, Record<string, unknown> | undefined>;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      const match = key === '$ref' && typeof child === 'string' ? /^#\/components\/([^/]+)\/(.+)$/.exec(child) : null;
      if (match) {
        const [, kind, name] = match as unknown as [string, string, string];
        const names = found.get(kind) ?? new Set<string>();
        found.set(kind, names);
        if (!names.has(name)) {
          names.add(name);
          visit(components[kind]?.[name]);
        }
      } else visit(child);
    }
  };
  visit(root);
  return found;
}

/** The reference for `audience`: its operations, the tags and components they use, its own title. */
export function referenceFor(document: OpenAPIObject, audience: Audience, docsUrl: string): OpenAPIObject {
  const paths: OpenAPIObject['paths'] = {};
  const schemes = new Set<string>();
  const tags = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    const kept: PathItemObject = {};
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation || audienceOf(operation) !== audience) continue;
      kept[method] = operation;
      for (const requirement of operation.security ?? [])
        for (const name of Object.keys(requirement)) schemes.add(name);
      for (const tag of operation.tags ?? []) tags.add(tag);
    }
    if (Object.keys(kept).length > 0) paths[path] = kept;
  }
  // Webhooks are what customers' endpoints receive.
  const webhooks = audience === 'customer' ? document.webhooks : undefined;
  const used = reachableComponents(document, { paths, webhooks });
  const components: Record<string, unknown> = {};
  for (const [kind, entries] of Object.entries(document.components ?? {}) as [string, Record<string, unknown>][]) {
    const names = kind === 'securitySchemes' ? schemes : used.get(kind);
    const keptEntries = Object.entries(entries).filter(([name]) => names?.has(name));
    if (keptEntries.length > 0) components[kind] = Object.fromEntries(keptEntries);
  }
  const { title, description } = TITLES[audience];
  const { webhooks: _all, ...rest } = document;
  return {
    ...rest,
    info: { ...document.info, title, description: description(docsUrl) },
    tags: (document.tags ?? []).filter((tag) => tags.has(tag.name)),
    paths,
    components,
    ...(webhooks ? { webhooks } : {}),
  };
}

/**
 * Error responses and their examples, written once under `components` and referenced by the
 * operations: most routes share their 401/403/429/500/503 answers, and spelled out per operation they
 * were most of the document (and of what Swagger UI has to digest before it shows anything).
 * Examples are named by their code; a response by its status and a digest of its content, so the
 * names stay put when other routes change.
 */
export function shareErrorResponses(document: OpenAPIObject): void {
  const components = (document.components ??= {});
  const responses = (components.responses ??= {});
  const examples = (components.examples ??= {});
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!/^[45]\d\d$/.test(status) || !response || '$ref' in response) continue;
        for (const media of Object.values(response.content ?? {})) {
          for (const [code, example] of Object.entries(media.examples ?? {})) {
            if ('$ref' in example) continue;
            examples[code] = example;
            media.examples![code] = { $ref: `#/components/examples/${code}` };
          }
        }
        const text = JSON.stringify(response);
        const name = `error_${status}_${createHash('sha256').update(text).digest('hex').slice(0, 8)}`;
        responses[name] = response;
        operation.responses[status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  components.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  components.examples = Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
}
