// The response check the e2e suites run on every JSON response (test/support/openapi-validation.ts):
// it must catch what drift looks like — an undocumented field, a wrong type or null, an undocumented
// status, a route documented without a schema — and accept a body that matches.
import { ResponseValidator } from '../support/openapi-validation';

const document = {
  openapi: '3.1.0',
  paths: {
    '/v1/things/{id}': {
      get: {
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          '404': {
            description: 'missing',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          },
        },
      },
      delete: { responses: { '200': { description: 'Success' } } },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        required: ['id', 'at', 'note'],
        properties: {
          id: { type: 'string' },
          at: { type: 'string', format: 'date-time' },
          note: { type: ['string', 'null'] },
          meta: { type: 'object', additionalProperties: true },
        },
      },
      ErrorEnvelope: {
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } },
      },
    },
  },
};

describe('ResponseValidator', () => {
  const validator = new ResponseValidator(document);
  const ok = { id: 't_1', at: '2026-01-01T00:00:00.000Z', note: null, meta: { anything: 1 } };

  it('accepts a body that matches, null where the schema allows it, and open objects where declared open', () => {
    expect(validator.check('GET', '/v1/things/:id', 200, ok)).toBeNull();
  });

  it('flags a field the document does not describe', () => {
    expect(validator.check('GET', '/v1/things/:id', 200, { ...ok, secret: 'x' })).toMatch(/additional properties/);
  });

  it('flags a missing required field, a wrong type and a bad format', () => {
    expect(validator.check('GET', '/v1/things/:id', 200, { id: 't_1', at: ok.at })).toMatch(/note/);
    expect(validator.check('GET', '/v1/things/:id', 200, { ...ok, id: 7 })).toMatch(/must be string/);
    expect(validator.check('GET', '/v1/things/:id', 200, { ...ok, at: 'yesterday' })).toMatch(/date-time/);
  });

  it('flags an undocumented status and a response documented without a schema', () => {
    expect(validator.check('GET', '/v1/things/:id', 409, { error: { code: 'x' } })).toMatch(
      /status 409 is not documented/,
    );
    expect(validator.check('DELETE', '/v1/things/:id', 200, ok)).toMatch(/without a JSON schema/);
  });

  it('checks errors of routes outside the document against the envelope', () => {
    expect(validator.checkEnvelope({ error: { code: 'resource_missing' } })).toBeNull();
    expect(validator.checkEnvelope({ message: 'Not Found' })).toMatch(/error/);
  });
});
