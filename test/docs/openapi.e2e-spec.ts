// The two references as served — customers' at /docs/openapi.json, operators' at
// /docs/operator/openapi.json: each valid OpenAPI, clean under `redocly lint` (redocly.yaml), and
// documenting the error contract (the envelope schema, every code, examples on every /v1 route);
// between them every operation, each in the reference of the people who call it.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CATALOGUE, ERROR_CODES, ERROR_TYPES, isErrorCode } from '../../src/common/errors/catalogue';
import { swaggerUiRendition } from '../../src/docs/swagger-ui-rendition';
import { startApi, type TestApi } from '../support/app';

const ROOT = resolve(__dirname, '../..');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

interface LintResult {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/**
 * Validates with @apidevtools/swagger-parser in a plain Node process: it loads an ESM-only
 * dependency that Jest's CommonJS runtime cannot require, which Node itself can.
 */
function swaggerParserValidate(file: string): Promise<string> {
  const script = `
    const SwaggerParser = require('@apidevtools/swagger-parser');
    const document = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'));
    SwaggerParser.validate(document, { resolve: { external: false } }).then(
      (api) => process.stdout.write('valid ' + api.openapi),
      (error) => { process.stdout.write('invalid: ' + error.message); process.exitCode = 1; },
    );`;
  return new Promise((resolvePromise) => {
    execFile(process.execPath, ['-e', script, file], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) =>
      resolvePromise(`${stdout}${error && !stdout ? ` ${error.message} ${stderr}` : ''}`.trim()),
    );
  });
}

/** Runs the repository's redocly CLI offline: no telemetry, no update check. */
function redoclyLint(file: string): Promise<LintResult> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      join(ROOT, 'node_modules/.bin/redocly'),
      ['lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000', file],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
          NO_COLOR: '1',
          CI: 'true',
        },
        timeout: 120_000,
        maxBuffer: 32 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        // Exit status 1 means "problems found"; the JSON report on stdout says which.
        try {
          resolvePromise(JSON.parse(stdout) as LintResult);
        } catch {
          reject(
            new Error(`redocly lint gave no JSON report (${error?.message ?? 'no error'}):\n${stderr}\n${stdout}`),
          );
        }
      },
    );
  });
}

function operations(document: any): { path: string; method: string; operation: any }[] {
  return Object.entries<any>(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] })),
  );
}

/** `node` itself, or what its `$ref` (#/components/…) points to in `document`. */
function resolved(document: any, node: any): any {
  if (typeof node?.$ref !== 'string') return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce((value: any, key: string) => value?.[key], document);
}

const REFERENCES = { customer: '/docs/openapi.json', operator: '/docs/operator/openapi.json' } as const;
type Audience = keyof typeof REFERENCES;

describe('the API references at /docs/openapi.json (customers) and /docs/operator/openapi.json (operators)', () => {
  let api: TestApi;
  const documents = {} as Record<Audience, any>;
  const files = {} as Record<Audience, string>;
  let dir: string;
  /** The customers' reference, which most checks below read. */
  let document: any;

  beforeAll(async () => {
    api = await startApi();
    dir = mkdtempSync(join(tmpdir(), 'mediajobs-openapi-'));
    for (const [audience, path] of Object.entries(REFERENCES) as [Audience, string][]) {
      const response = await fetch(`${api.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      documents[audience] = await response.json();
      files[audience] = join(dir, `${audience}.json`);
      writeFileSync(files[audience], JSON.stringify(documents[audience], null, 2));
    }
    document = documents.customer;
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await api.close();
  });

  it('gives customers what a key can call (and the licence and signed-link routes), operators the rest, each operation once', () => {
    const of = (audience: Audience) => operations(documents[audience]).map(({ path, method }) => `${method} ${path}`);
    const customer = of('customer');
    const operator = of('operator');
    expect(customer.filter((operation) => operator.includes(operation))).toEqual([]);
    for (const { path, method, operation } of operations(documents.customer)) {
      const byKey = operation.security.some((requirement: object) => 'api_key' in requirement);
      expect({ path, method, customer: byKey || /^\/v1\/(license|assets|playback)\b/.test(path) }).toEqual({
        path,
        method,
        customer: true,
      });
    }
    expect(customer).toEqual(expect.arrayContaining(['post /v1/sdr2hdr/jobs', 'post /v1/license/activate']));
    expect(
      customer.filter((operation) =>
        /\/v1\/(admin|sessions|password-links|account\/members)\b|\/health\//.test(operation),
      ),
    ).toEqual([]);
    expect(operator).toEqual(
      expect.arrayContaining([
        'post /v1/admin/accounts',
        'post /v1/sessions',
        'get /v1/account/members',
        'get /health/live',
        'patch /v1/account',
      ]),
    );
    expect(
      operations(documents.operator).every(({ operation }) => !operation.security.some((r: object) => 'api_key' in r)),
    ).toBe(true);
    expect(documents.customer.info.title).toBe('mediajobs API');
    expect(documents.operator.info.title).toBe('mediajobs operator API');
    expect(documents.operator.webhooks).toBeUndefined();
  });

  it.each(Object.keys(REFERENCES) as Audience[])(
    '%s: a valid OpenAPI 3 document (swagger-parser)',
    async (audience) => {
      expect(documents[audience].openapi).toMatch(/^3\./);
      expect(await swaggerParserValidate(files[audience])).toBe(`valid ${documents[audience].openapi}`);
    },
  );

  it.each(Object.keys(REFERENCES) as Audience[])(
    '%s: the copy Swagger UI draws (swagger-ui-rendition.ts) is a valid OpenAPI 3.0 document',
    async (audience) => {
      const file = join(dir, `${audience}-rendition.json`);
      writeFileSync(file, JSON.stringify(swaggerUiRendition(documents[audience])));
      expect(await swaggerParserValidate(file)).toBe('valid 3.0.3');
    },
  );

  it.each(Object.keys(REFERENCES) as Audience[])('%s: lints with no problem under redocly.yaml', async (audience) => {
    const result = await redoclyLint(files[audience]);
    const problems = result.problems.map(
      (problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`,
    );
    expect(problems).toEqual([]);
    expect(result.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("is OpenAPI 3.1 with its tags in the order of a user's journey, admin last", () => {
    expect(document.openapi).toBe('3.1.0');
    expect(documents.operator.openapi).toBe('3.1.0');
    const tags = document.tags.map((tag: { name: string }) => tag.name);
    const journey = ['uploads', 'sdr2hdr', 'audio', 'account', 'webhooks', 'events', 'license'];
    expect(tags.filter((tag: string) => journey.includes(tag))).toEqual(journey);
    const operatorTags = documents.operator.tags.map((tag: { name: string }) => tag.name);
    expect(operatorTags[operatorTags.length - 1]).toBe('admin');
  });

  it.each(Object.keys(REFERENCES) as Audience[])(
    '%s: describes the body of every success response with a schema, and every JSON one with an example',
    (audience) => {
      const missing: string[] = [];
      for (const { path, method, operation } of operations(documents[audience])) {
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          if (!/^2/.test(status)) continue;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          const content = Object.entries<any>(response.content ?? {});
          if (content.length === 0) missing.push(`${where}: no content`);
          for (const [type, media] of content) {
            if (!media.schema) missing.push(`${where} ${type}: no schema`);
            if (type === 'application/json' && media.example === undefined && !media.examples)
              missing.push(`${where}: no example`);
          }
        }
      }
      expect(missing).toEqual([]);
    },
  );

  it('gives the job view, its items and the webhook event one ErrorObject schema for `error`', () => {
    const { schemas } = document.components;
    const errorOrNull = { oneOf: [{ $ref: '#/components/schemas/ErrorObject' }, { type: 'null' }] };
    expect(schemas.JobResponse.properties.error).toMatchObject(errorOrNull);
    expect(schemas.JobItemResponse.properties.error).toMatchObject(errorOrNull);
    expect(schemas.WebhookEventData.properties.error).toMatchObject(errorOrNull);
    expect(schemas.JobResponse.required).toEqual(expect.arrayContaining(['items', 'billing', 'error']));
    expect(schemas.JobBillingResponse.properties.charged_credits.type).toBe('integer');
    expect(schemas.ItemOutputResponse.properties.url).toMatchObject({ type: 'string', format: 'uri' });
    expect(schemas.JobResponse.properties.started_at).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    const job = document.paths['/v1/sdr2hdr/jobs/{job_id}'].get.responses['200'].content['application/json'];
    expect(job.schema).toEqual({ $ref: '#/components/schemas/JobResponse' });
    expect(job.example.billing).toMatchObject({ charged_credits: expect.any(Number), state: expect.any(String) });
  });

  it('shows an API key or webhook secret only in the answers to create and rotate', () => {
    const bodyOf = (path: string, method: string, status: string) =>
      document.paths[path][method].responses[status].content['application/json'].schema.$ref.split('/').pop();
    const { schemas } = document.components;
    const keys = '/v1/account/api-keys';
    expect(schemas[bodyOf(keys, 'post', '201')].required).toContain('key');
    expect(schemas[bodyOf(`${keys}/{id}/rotate`, 'post', '201')].required).toContain('key');
    expect(schemas[bodyOf(`${keys}/{id}`, 'delete', '200')].properties.key).toBeUndefined();
    const list = schemas[bodyOf(keys, 'get', '200')];
    expect(schemas[list.properties.data.items.$ref.split('/').pop()].properties.key).toBeUndefined();
    const endpoints = '/v1/webhook-endpoints';
    expect(schemas[bodyOf(endpoints, 'post', '201')].required).toContain('secret');
    expect(schemas[bodyOf(`${endpoints}/{id}/rotate-secret`, 'post', '200')].required).toContain('secret');
    expect(schemas[bodyOf(`${endpoints}/{id}`, 'get', '200')].properties.secret).toBeUndefined();
  });

  it('describes what the service POSTs to webhook endpoints as OpenAPI 3.1 webhooks', () => {
    expect(Object.keys(document.webhooks)).toEqual([
      'job.succeeded',
      'job.partially_succeeded',
      'job.failed',
      'job.cancelled',
      'webhook.test',
    ]);
    for (const item of Object.values<any>(document.webhooks)) {
      const body = item.post.requestBody.content['application/json'];
      expect(body.schema).toEqual({ $ref: '#/components/schemas/WebhookEvent' });
      expect(item.post.parameters.map((parameter: { name: string }) => parameter.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
    }
  });

  it.each(Object.values(REFERENCES))('is also served as YAML (%s)', async (path) => {
    const response = await fetch(`${api.url}${path.replace(/json$/, 'yaml')}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/^openapi: 3\./m);
  });

  it.each(Object.keys(REFERENCES) as Audience[])(
    '%s: documents the error envelope with exactly the catalogue codes and families',
    (audience) => {
      const { ErrorEnvelope, ErrorObject } = documents[audience].components.schemas;
      expect(ErrorEnvelope).toMatchObject({
        type: 'object',
        required: ['error'],
        properties: { error: { $ref: '#/components/schemas/ErrorObject' } },
      });
      expect(ErrorObject.required).toEqual(['type', 'code', 'message', 'param', 'request_id', 'doc_url', 'retryable']);
      expect(ErrorObject.properties.code.enum).toEqual(ERROR_CODES);
      expect(new Set(ErrorObject.properties.code.enum)).toEqual(new Set(Object.keys(CATALOGUE)));
      expect(ErrorObject.properties.type.enum).toEqual([...ERROR_TYPES]);
      expect(Object.keys(ErrorObject.properties)).toEqual(
        expect.arrayContaining(['param', 'request_id', 'doc_url', 'retryable', 'details']),
      );
    },
  );

  it.each(Object.keys(REFERENCES) as Audience[])(
    '%s: gives every /v1 operation 4xx envelope responses whose examples match the catalogue',
    (audience) => {
      const reference = documents[audience];
      const v1 = operations(reference).filter(({ path }) => path.startsWith('/v1/'));
      expect(v1.length).toBeGreaterThan(0);
      for (const { path, method, operation } of v1) {
        const where = `${method.toUpperCase()} ${path}`;
        const clientErrors = Object.keys(operation.responses).filter((status) => /^4\d\d$/.test(status));
        expect({ where, clientErrors: clientErrors.length > 0 }).toEqual({ where, clientErrors: true });
        for (const [status, shared] of Object.entries<any>(operation.responses)) {
          if (!/^[45]\d\d$/.test(status)) continue;
          const response = resolved(reference, shared);
          const media = response.content?.['application/json'];
          expect({ where, status, schema: media?.schema }).toEqual({
            where,
            status,
            schema: { $ref: '#/components/schemas/ErrorEnvelope' },
          });
          const examples = Object.entries<any>(media.examples ?? {});
          expect({ where, status, examples: examples.length > 0 }).toEqual({ where, status, examples: true });
          for (const [name, example] of examples) {
            const error = resolved(reference, example).value.error;
            expect(isErrorCode(error.code)).toBe(true);
            const row = CATALOGUE[error.code as keyof typeof CATALOGUE];
            expect({ where, name, status: Number(status), type: error.type, retryable: error.retryable }).toEqual({
              where,
              name,
              status: row.status,
              type: row.type,
              retryable: row.retryable,
            });
            expect(error.doc_url).toBe(`${api.config.docsUrl}/errors.html#${error.code}`);
            expect(error.request_id).toMatch(/^req_/);
          }
        }
      }
    },
  );

  it('documents on every operation what any request to it may be answered: a malformed URL, a body that is not JSON, a reused Idempotency-Key', () => {
    // Every route parses a body it is sent (DELETE and a bodiless POST too), and every POST takes an
    // Idempotency-Key: the chaos fuzzer met these answers on routes whose reference did not list them.
    for (const reference of [document, documents.operator]) {
      const examples = (operation: any, status: string): string[] =>
        Object.keys(
          resolved(reference, operation.responses[status] ?? {}).content?.['application/json']?.examples ?? {},
        );
      for (const { path, method, operation } of operations(reference)) {
        const where = `${method.toUpperCase()} ${path}`;
        // Any URL may be malformed (a broken percent-encoding) or carry a value that cannot be stored (U+0000
        // in a path or query value): the fuzzer met GET /v1/admin/accounts/{id} → 400 undocumented.
        expect({ where, codes: examples(operation, '400') }).toEqual({
          where,
          codes: expect.arrayContaining(['invalid_parameter']),
        });
        if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
        expect({ where, codes: [...examples(operation, '400'), ...examples(operation, '415')] }).toEqual({
          where,
          codes: expect.arrayContaining(['invalid_json', 'unsupported_content_type']),
        });
        if (method === 'post')
          expect({ where, codes: examples(operation, '409') }).toEqual({
            where,
            codes: expect.arrayContaining(['idempotency_conflict']),
          });
      }
    }
  });

  it('names the credential of every operation and documents rate-limit and request-id headers', () => {
    for (const { path, method, operation } of [...operations(document), ...operations(documents.operator)]) {
      const where = `${method.toUpperCase()} ${path}`;
      expect({ where, security: Array.isArray(operation.security) }).toEqual({ where, security: true });
      if (path.startsWith('/v1/admin/'))
        expect({ where, security: operation.security }).toEqual({ where, security: [{ admin_token: [] }] });
      expect(operation.operationId).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(typeof operation.summary).toBe('string');
    }
    const credits = document.paths['/v1/account/credits'].get;
    // A key or a dashboard session; the owner's routes take only a session (a key is not a person).
    expect(credits.security).toEqual([{ api_key: [] }, { session: [] }]);
    expect(documents.operator.paths['/v1/account/members'].get.security).toEqual([{ session: [] }]);
    expect(documents.operator.paths['/v1/account'].patch.security).toEqual([{ session: [] }]);
    expect(document.components.securitySchemes.session).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'mj_session',
    });
    expect(Object.keys(credits.responses['200'].headers)).toEqual(
      expect.arrayContaining(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
    );
    expect(Object.keys(resolved(document, credits.responses['429']).headers)).toContain('Retry-After');
    expect(Object.keys(resolved(document, credits.responses['401']).content['application/json'].examples)).toEqual(
      expect.arrayContaining(['missing_api_key', 'invalid_api_key', 'expired_api_key', 'revoked_api_key']),
    );
    expect(documents.operator.paths['/health/live'].get.security).toEqual([]);
  });
});
