// Every JSON response a test API sends is checked against the OpenAPI document that API serves
// (Ajv, JSON Schema 2020-12 = OpenAPI 3.1), so a field added in code and not in the document, a
// wrong type or null, or an undocumented status fails the test that caused it. startApi (app.ts)
// hooks `observe` into Fastify's onSend; openapi-report.ts (setupFilesAfterEnv) fails the test
// and counts. Objects the document describes are closed here (additionalProperties: false) unless
// the document says otherwise, which is what makes an undocumented field an error.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { appendFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowedDetailFields } from '../../src/common/openapi/error-details';

type Json = Record<string, unknown>;

/** `strict` (default): a mismatch fails the test. `report`: mismatches are only printed at the end of the run. `off`. */
export type ValidationMode = 'strict' | 'report' | 'off';
export const VALIDATION_MODE: ValidationMode = ((): ValidationMode => {
  const mode = process.env.OPENAPI_VALIDATION ?? 'strict';
  if (mode === 'strict' || mode === 'report' || mode === 'off') return mode;
  throw new Error(`OPENAPI_VALIDATION must be strict, report or off (not ${mode})`);
})();

/** The folder where each test file leaves its counts, read by global-teardown.ts. One per `jest` run. */
export function reportDir(): string {
  return join(tmpdir(), `mediajobs-openapi-${process.env.TEST_RUN_DATABASE ?? process.pid}`);
}

export interface Mismatch {
  where: string;
  problem: string;
  body: string;
}

/** What this test file's APIs sent so far (a Jest test file has its own module registry). */
export const tally = { validated: 0, skipped: 0, mismatches: [] as Mismatch[], unreported: [] as Mismatch[] };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** Marks every object schema with properties as closed, unless it says itself what else it allows. */
function closeObjects(node: unknown, insideAllOf = false): unknown {
  if (Array.isArray(node)) return node.map((item) => closeObjects(item, insideAllOf));
  if (!node || typeof node !== 'object') return node;
  const schema = { ...(node as Json) };
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'example' || key === 'examples' || key === 'enum' || key === 'const' || key === 'default') continue;
    if (key === 'properties' || key === '$defs' || key === 'patternProperties') {
      schema[key] = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, closeObjects(sub)]));
    } else {
      schema[key] = closeObjects(value, key === 'allOf');
    }
  }
  if (schema.properties && !insideAllOf && schema.additionalProperties === undefined) {
    schema.additionalProperties = false;
  }
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/components/schemas/')) {
    schema.$ref = `openapi#/$defs/${schema.$ref.slice('#/components/schemas/'.length)}`;
  }
  return schema;
}

function isJson(contentType: string | undefined): boolean {
  return !!contentType && /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType);
}

/** Fastify's `/v1/x/:id` as the document's `/v1/x/{id}`. */
export function openApiPath(routeUrl: string): string {
  return routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export class ResponseValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction | string>();
  private readonly paths: Json;
  private readonly responses: Json;

  constructor(document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    const components = (document.components as Json | undefined) ?? {};
    this.ajv.addSchema({ $id: 'openapi', $defs: closeObjects(components.schemas ?? {}) as Json });
    this.paths = (document.paths as Json) ?? {};
    this.responses = (components.responses as Json | undefined) ?? {};
  }

  /** The validator of one documented response, or why there is none. */
  private validatorFor(method: string, path: string, status: number): ValidateFunction | string {
    const key = `${method} ${path} ${status}`;
    const cached = this.compiled.get(key);
    if (cached) return cached;
    let result: ValidateFunction | string;
    const operation = (this.paths[path] as Json | undefined)?.[method] as Json | undefined;
    if (!operation) {
      result = `${method.toUpperCase()} ${path} is not in the document`;
    } else {
      const responses = (operation.responses as Json) ?? {};
      const documented = (responses[String(status)] ??
        responses[`${String(status).charAt(0)}XX`] ??
        responses.default) as Json | undefined;
      // Shared responses (most errors) are written once under components.responses.
      const ref = typeof documented?.$ref === 'string' ? documented.$ref.replace('#/components/responses/', '') : null;
      const response = ref === null ? documented : (this.responses[ref] as Json | undefined);
      const schema = (response?.content as Json | undefined)?.['application/json'] as Json | undefined;
      if (!response) result = `status ${status} is not documented`;
      else if (!schema?.schema) result = `status ${status} is documented without a JSON schema`;
      else result = this.ajv.compile(closeObjects(schema.schema) as Json);
    }
    this.compiled.set(key, result);
    return result;
  }

  /** Null when the body matches; else what is wrong. */
  check(method: string, routeUrl: string, status: number, body: unknown): string | null {
    const validate = this.validatorFor(method.toLowerCase(), openApiPath(routeUrl), status);
    if (typeof validate === 'string') return validate;
    if (validate(body)) return null;
    return this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' });
  }

  /** An error from a route the document does not describe (an unknown path's 404): still the envelope. */
  checkEnvelope(body: unknown): string | null {
    const validate = this.ajv.getSchema('openapi#/$defs/ErrorEnvelope');
    if (!validate) return 'the document has no ErrorEnvelope schema';
    if (validate(body)) return null;
    return this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' });
  }

  /** Whether a route is described at all (the dashboard's pages, /metrics and /docs are not). */
  documents(method: string, routeUrl: string): boolean {
    const item = this.paths[openApiPath(routeUrl)] as Json | undefined;
    return !!item && METHODS.includes(method.toLowerCase()) && !!item[method.toLowerCase()];
  }
}

/**
 * Checks one response a test API sent. Routes outside the document (dashboard pages, /metrics) are
 * skipped; an error from any route (an unknown path's 404 too) must still be the documented envelope.
 */
export function observe(
  validator: ResponseValidator,
  response: {
    method: string;
    routeUrl: string | undefined;
    status: number;
    contentType: string | undefined;
    payload: unknown;
  },
): void {
  if (!isJson(response.contentType) || response.method === 'HEAD') return;
  const documented = response.routeUrl !== undefined && validator.documents(response.method, response.routeUrl);
  const where = `${response.method} ${response.routeUrl ?? '(no route)'} → ${response.status}`;
  let body: unknown;
  const text =
    typeof response.payload === 'string'
      ? response.payload
      : Buffer.isBuffer(response.payload)
        ? response.payload.toString('utf8')
        : undefined;
  if (text === undefined) return; // a stream: not a JSON document we can read here
  try {
    body = JSON.parse(text);
  } catch {
    record({ where, problem: 'the body is not JSON although Content-Type says so', body: text.slice(0, 500) });
    return;
  }
  let problem: string | null;
  if (documented) problem = validator.check(response.method, response.routeUrl!, response.status, body);
  else if (response.status >= 400) problem = validator.checkEnvelope(body);
  else {
    tally.skipped++;
    return;
  }
  tally.validated++;
  // Error responses only: a job view's `error` (a partial failure's breakdown) is described on the page apart.
  if (response.status >= 400) problem ??= undocumentedDetails(body);
  if (problem) record({ where, problem, body: text.slice(0, 2000) });
}

/** An error's `details` may hold only the fields the errors page lists for its code (src/common/openapi/error-details.ts). */
function undocumentedDetails(body: unknown): string | null {
  const error = (body as { error?: { code?: unknown; details?: unknown } } | null)?.error;
  if (!error || typeof error.code !== 'string' || !error.details || typeof error.details !== 'object') return null;
  const allowed = allowedDetailFields(error.code);
  const extra = Object.keys(error.details).filter((name) => !allowed.includes(name));
  return extra.length > 0
    ? `error.details of ${error.code} has fields the errors page does not list (src/common/openapi/error-details.ts): ${extra.join(', ')}`
    : null;
}

function record(mismatch: Mismatch): void {
  tally.mismatches.push(mismatch);
  tally.unreported.push(mismatch);
}

/** This file's numbers, for global-teardown.ts to add up and print. */
export function writeFileReport(testPath: string): void {
  if (VALIDATION_MODE === 'off') return;
  mkdirSync(reportDir(), { recursive: true });
  appendFileSync(
    join(reportDir(), 'results.jsonl'),
    `${JSON.stringify({ file: testPath, validated: tally.validated, skipped: tally.skipped, mismatches: tally.mismatches })}\n`,
  );
}
