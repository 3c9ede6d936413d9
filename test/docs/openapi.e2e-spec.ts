// The OpenAPI document as served: valid OpenAPI, clean under `redocly lint` (redocly.yaml), and
// documenting the error contract (the envelope schema, every code, examples on every /v1 route).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CATALOGUE, ERROR_CODES, ERROR_TYPES, isErrorCode } from '../../src/common/errors/catalogue';
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

describe('OpenAPI document at /docs/openapi.json', () => {
  let api: TestApi;
  let document: any;
  let dir: string;

  let file: string;

  beforeAll(async () => {
    api = await startApi();
    const response = await fetch(`${api.url}/docs/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    document = await response.json();
    dir = mkdtempSync(join(tmpdir(), 'mediajobs-openapi-'));
    file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document, null, 2));
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await api.close();
  });

  it('is a valid OpenAPI 3 document (swagger-parser)', async () => {
    expect(document.openapi).toMatch(/^3\./);
    expect(await swaggerParserValidate(file)).toBe(`valid ${document.openapi}`);
  });

  it('lints with no problem under redocly.yaml', async () => {
    const result = await redoclyLint(file);
    const problems = result.problems.map(
      (problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`,
    );
    expect(problems).toEqual([]);
    expect(result.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("is OpenAPI 3.1 with its tags in the order of a user's journey, admin last", () => {
    expect(document.openapi).toBe('3.1.0');
    const tags = document.tags.map((tag: { name: string }) => tag.name);
    const journey = ['uploads', 'sdr2hdr', 'audio', 'account', 'webhooks', 'events', 'license'];
    expect(tags.filter((tag: string) => journey.includes(tag))).toEqual(journey);
    expect(tags[tags.length - 1]).toBe('admin');
  });

  it('describes the body of every success response with a schema, and every JSON one with an example', () => {
    const missing: string[] = [];
    for (const { path, method, operation } of operations(document)) {
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
  });

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

  it('is also served as YAML', async () => {
    const response = await fetch(`${api.url}/docs/openapi.yaml`);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/^openapi: 3\./m);
  });

  it('documents the error envelope with exactly the catalogue codes and families', () => {
    const { ErrorEnvelope, ErrorObject } = document.components.schemas;
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
  });

  it('gives every /v1 operation 4xx envelope responses whose examples match the catalogue', () => {
    const v1 = operations(document).filter(({ path }) => path.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThan(0);
    for (const { path, method, operation } of v1) {
      const where = `${method.toUpperCase()} ${path}`;
      const clientErrors = Object.keys(operation.responses).filter((status) => /^4\d\d$/.test(status));
      expect({ where, clientErrors: clientErrors.length > 0 }).toEqual({ where, clientErrors: true });
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (!/^[45]\d\d$/.test(status)) continue;
        const media = response.content?.['application/json'];
        expect({ where, status, schema: media?.schema }).toEqual({
          where,
          status,
          schema: { $ref: '#/components/schemas/ErrorEnvelope' },
        });
        const examples = Object.entries<any>(media.examples ?? {});
        expect({ where, status, examples: examples.length > 0 }).toEqual({ where, status, examples: true });
        for (const [name, example] of examples) {
          const error = example.value.error;
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
  });

  it('names the credential of every operation and documents rate-limit and request-id headers', () => {
    for (const { path, method, operation } of operations(document)) {
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
    expect(document.paths['/v1/account/members'].get.security).toEqual([{ session: [] }]);
    expect(document.paths['/v1/account'].patch.security).toEqual([{ session: [] }]);
    expect(document.components.securitySchemes.session).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'mj_session',
    });
    expect(Object.keys(credits.responses['200'].headers)).toEqual(
      expect.arrayContaining(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
    );
    expect(Object.keys(credits.responses['429'].headers)).toContain('Retry-After');
    expect(Object.keys(credits.responses['401'].content['application/json'].examples)).toEqual(
      expect.arrayContaining(['missing_api_key', 'invalid_api_key', 'expired_api_key', 'revoked_api_key']),
    );
    expect(document.paths['/health/live'].get.security).toEqual([]);
  });
});
