// The API docs: the customer reference (Swagger UI at /docs, the OpenAPI JSON at /docs/openapi.json),
// the operator reference (/docs/operator) and the error reference at /docs/errors.html. What every route shares (security, the errors its access rule
// implies, success response, headers) is filled in here from the route's own metadata, so a
// controller declares only what is particular to it.
import { HTTP_CODE_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  DocumentBuilder,
  SwaggerModule,
  type HeadersObject,
  type OpenAPIObject,
  type OperationObject,
  type ReferenceObject,
  type ResponseObject,
  type SecurityRequirementObject,
} from '@nestjs/swagger';
import { ACCESS, type Access } from '../auth/auth.decorators';
import type { AppConfig } from '../common/config/config';
import { ERROR_CODES, ERROR_TYPES, type ErrorCode } from '../common/errors/catalogue';
import { sendStaticFile, staticFile, type StaticFile } from '../common/http/static-files';
import { ALWAYS, EXAMPLE_DOCS_URL, groupCodes, mergeErrorResponses } from '../common/openapi/api-error-responses';
import { renderErrorsPage } from './errors-page';
import { JOB_EVENTS, TEST_EVENT } from '../webhooks/outbox.writer';
import { WebhookEventBody } from '../webhooks/dto/webhook-endpoint.dto';
import { addSuccessExamples } from './success-examples';
import { referenceFor, shareErrorResponses, type Audience } from './references';
import { swaggerUiPage, serveSwaggerUiAssets } from './swagger-ui-page';
import { swaggerUiRendition } from './swagger-ui-rendition';

type AccessKind = Access['kind'];

const SECURITY: Record<AccessKind, SecurityRequirementObject[]> = {
  // A key, or a dashboard session (members-only routes take only the session: see securityOf).
  api_key: [{ api_key: [] }, { session: [] }],
  admin: [{ admin_token: [] }],
  // An explicit empty list: these routes need no credential at all.
  public: [],
  operational: [],
};

/** Errors every route of an access kind can answer, before anything particular to the route (docs/api-decisions.md §2). */
const IMPLIED_ERRORS: Record<AccessKind, ErrorCode[]> = {
  api_key: groupCodes(['auth', 'session', 'rate', 'maintenance']),
  // A wrong token spends the address's failed-credential budget (rate_limit_exceeded) like a wrong key.
  admin: groupCodes(['admin', 'rate']),
  public: groupCodes(['rate', 'maintenance']),
  operational: [],
};

/**
 * Descriptions of the tags controllers use, in the order of a user's journey (upload, submit, read the
 * account, get told by webhooks, …, operators last): the document's `tags` and Swagger UI follow it.
 * A tag missing here fails the OpenAPI lint test.
 */
const TAGS: Record<string, string> = {
  uploads: 'Direct upload of a source file, referenced by upload_id in a job.',
  sdr2hdr: 'SDR video to HDR10 (HEVC Main10, BT.2020, PQ) jobs: submit, read, list, cancel.',
  audio: 'Speech loudness normalisation jobs: submit, read, list, cancel.',
  assets: 'Outputs of finished jobs, through signed expiring links.',
  account: 'Credit balance, ledger and API keys of the calling account (X-API-Key).',
  webhooks: 'Webhook endpoints (Standard Webhooks signatures) and their delivery log.',
  events: 'Events sent to webhook endpoints, and their redelivery.',
  license: 'Plugin licence activation, validation and offline tokens (Ed25519).',
  licenses: "The account's plugin licences and their activated devices.",
  sessions: 'Dashboard sign-in and sign-out (session cookie and CSRF token), and one-time set-password links.',
  members: 'The people of an account and their roles (owners, signed in to the dashboard).',
  operations: 'Liveness and readiness probes.',
  admin: 'Operator endpoints (X-Admin-Token): accounts, credits, plans, maintenance, blocked content.',
};
const TAG_ORDER = Object.keys(TAGS);
const tagRank = (name: string): number => (TAG_ORDER.includes(name) ? TAG_ORDER.indexOf(name) : TAG_ORDER.length);

const HEADERS: HeadersObject = {
  'X-Request-Id': {
    description: 'Identifier of this request (`req_…`); equals `error.request_id` on errors.',
    schema: { type: 'string', example: 'req_0AbCdEfGh1234567890abcd' },
  },
  'X-RateLimit-Limit': {
    description: "Requests per second the account's plan allows.",
    schema: { type: 'integer', example: 100 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current one-second window.',
    schema: { type: 'integer', example: 99 },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the window resets.',
    schema: { type: 'integer', example: 1 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying (equals `details.retry_after_seconds` where given).',
    schema: { type: 'integer', example: 1 },
  },
};
const headerRef = (name: string): ReferenceObject => ({ $ref: `#/components/headers/${name}` });

/** `AccountController.createKey` → `accountCreateKey`: stable, URL-safe names for generated clients. */
export function operationIdFor(controllerKey: string, methodKey: string): string {
  const controller = controllerKey.replace(/Controller$/, '');
  return `${controller.charAt(0).toLowerCase()}${controller.slice(1)}${methodKey.charAt(0).toUpperCase()}${methodKey.slice(1)}`;
}

interface RouteFacts {
  access?: Access;
  httpCode?: number;
}

/** Access rule and status code of every route handler, keyed by the operationId the document gives it. */
function routeFacts(app: NestFastifyApplication): Map<string, RouteFacts> {
  const facts = new Map<string, RouteFacts>();
  for (const module of app.get(ModulesContainer, { strict: false }).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const classAccess = Reflect.getMetadata(ACCESS, controller) as Access | undefined;
      for (
        let proto = controller.prototype as object | null;
        proto && proto !== Object.prototype;
        proto = Object.getPrototypeOf(proto)
      ) {
        for (const name of Object.getOwnPropertyNames(proto)) {
          const handler = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
          if (name === 'constructor' || typeof handler !== 'function') continue;
          if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
          const id = operationIdFor(controller.name, name);
          if (facts.has(id)) continue; // an override lower in the chain wins
          facts.set(id, {
            access: (Reflect.getMetadata(ACCESS, handler) as Access | undefined) ?? classAccess,
            httpCode: Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined,
          });
        }
      }
    }
  }
  return facts;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * What any request of a method may be answered, whatever the route: a body sent with it is parsed (a
 * DELETE's or a bodiless POST's too: not JSON → 400, another Content-Type → 415), and every POST takes an
 * Idempotency-Key (applyIdempotencyToPosts: reused with other bytes, or still in flight → 409).
 */
const METHOD_ERRORS: Partial<Record<(typeof METHODS)[number], ErrorCode[]>> = {
  post: ['invalid_json', 'unsupported_content_type', 'idempotency_conflict', 'resource_locked'],
  put: ['invalid_json', 'unsupported_content_type'],
  patch: ['invalid_json', 'unsupported_content_type'],
  delete: ['invalid_json', 'unsupported_content_type'],
};

function completeOperation(method: string, operation: OperationObject, facts: RouteFacts | undefined): void {
  const responses = operation.responses;
  const kind = facts?.access?.kind;
  mergeErrorResponses(responses, METHOD_ERRORS[method as (typeof METHODS)[number]] ?? []);
  if (kind) {
    operation.security = facts?.access?.kind === 'api_key' && facts.access.members ? [{ session: [] }] : SECURITY[kind];
    mergeErrorResponses(responses, [...IMPLIED_ERRORS[kind], ...ALWAYS]);
  } else {
    mergeErrorResponses(responses, [...ALWAYS]);
  }
  if (!Object.keys(responses).some((status) => /^2/.test(status))) {
    responses[String(facts?.httpCode ?? (method === 'post' ? 201 : 200))] = { description: 'Success' };
  }
  for (const [status, response] of Object.entries(responses)) {
    if (!response || '$ref' in response) continue;
    const headers: HeadersObject = { 'X-Request-Id': headerRef('X-Request-Id') };
    // Authenticated responses carry the rate-limit headers (docs/api-decisions.md §1); 401/403 end before the limiter.
    if (kind === 'api_key' && status !== '401' && status !== '403') {
      for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
        headers[name] = headerRef(name);
    }
    if (status === '429' || status === '503') headers['Retry-After'] = headerRef('Retry-After');
    response.headers = { ...headers, ...response.headers };
  }
}

/** Example doc_url values point at the served DOCS_URL, so a reader can follow them. */
function localiseExamples(response: ResponseObject, docsUrl: string): void {
  for (const media of Object.values(response.content ?? {})) {
    for (const example of Object.values(media.examples ?? {})) {
      const error =
        'value' in example ? (example.value as { error?: { doc_url?: unknown } } | undefined)?.error : undefined;
      if (typeof error?.doc_url === 'string' && error.doc_url.startsWith(EXAMPLE_DOCS_URL)) {
        error.doc_url = `${docsUrl}${error.doc_url.slice(EXAMPLE_DOCS_URL.length)}`;
      }
    }
  }
}

const EVENT_SUMMARIES: Record<string, string> = {
  'job.succeeded': 'A job ended with every item succeeded: read it for the output links',
  'job.partially_succeeded': 'A job ended with some items failed (charged for the succeeded ones only)',
  'job.failed': 'A job failed: `data.error` is its error, nothing was charged',
  'job.cancelled': 'A job was cancelled (charged only for the items delivered before it)',
  [TEST_EVENT]: 'A test event, sent on request to one endpoint (`data.job` is null)',
};

/** What the service sends to webhook endpoints, one entry per event type (OpenAPI 3.1 `webhooks`). */
function webhooksOf(): NonNullable<OpenAPIObject['webhooks']> {
  const header = (name: string, description: string, example: string) => ({
    name,
    in: 'header' as const,
    required: true,
    description,
    schema: { type: 'string' as const, example },
  });
  return Object.fromEntries(
    [...JOB_EVENTS, TEST_EVENT].map((event) => [
      event,
      {
        post: {
          operationId: `webhook${event
            .split(/[._]/)
            .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
            .join('')}`,
          summary: EVENT_SUMMARIES[event],
          description:
            'POSTed to each enabled endpoint subscribed to the event, signed as Standard Webhooks (verify ' +
            '`webhook-signature` with the endpoint secret over `webhook-id.webhook-timestamp.body`). Answer 2xx ' +
            'within 10 s; anything else is retried on the schedule, with the same `webhook-id` (deduplicate on it).',
          tags: ['webhooks'],
          security: [],
          parameters: [
            header('webhook-id', 'The event id (`evt_…`), the same on every retry.', 'evt_0Qx3cA1b2C3d4E5f6G7h8i9'),
            header('webhook-timestamp', 'Seconds since the epoch when this attempt was signed.', '1767000000'),
            header(
              'webhook-signature',
              'Space-separated `v1,<base64 HMAC-SHA256>` signatures (two while a rotated secret overlaps).',
              'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            ),
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEvent' } } },
          },
          responses: {
            '200': { description: 'Received (any 2xx). Other statuses, timeouts and refused connections are retried.' },
          },
        },
      },
    ]),
  );
}

export function buildOpenApiDocument(app: NestFastifyApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('mediajobs API')
    .setDescription(
      'Paid asynchronous media-processing jobs (SDR→HDR10, speech loudness) and a plugin licence service. ' +
        'Every error is the envelope in `ErrorEnvelope`, with the HTTP status of its code; branch on `error.type`, ' +
        `then on \`error.code\`. See the [error reference](${config.docsUrl}/errors.html).`,
    )
    .setVersion('1')
    // 3.1: JSON Schema 2020-12 (null as a type, validated by any JSON Schema tool) and `webhooks`.
    .setOpenAPIVersion('3.1.0')
    .addServer(config.publicBaseUrl)
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key (`mjk_…`) of an account.' },
      'api_key',
    )
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-Admin-Token', description: 'Operator token (ADMIN_TOKEN).' },
      'admin_token',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'cookie',
        name: 'mj_session',
        description:
          'Dashboard session of a signed-in member (POST /v1/sessions); the cookie is __Host-mj_session in production (https). ' +
          'Two session cookies in one request are refused (400). Requests that change something also ' +
          'need the X-CSRF-Token header of the session and must come from the service’s own origin. The ' +
          "member's role stands for scopes: owner and developer every scope, viewer reads only.",
      },
      'session',
    )
    .build();
  // A deep copy, since decorator metadata objects are shared by every app built in this process.
  // JSON rather than structuredClone: its objects keep this realm's Object.prototype, which the YAML
  // serialiser requires (under Jest, structuredClone's come from another realm and serialise to "").
  const document = JSON.parse(
    JSON.stringify(
      SwaggerModule.createDocument(app, builder, {
        operationIdFactory: (controller, method) => operationIdFor(controller, method),
        // Named although no route returns it: the body of every webhook request (document.webhooks).
        extraModels: [WebhookEventBody],
      }),
    ),
  ) as OpenAPIObject;

  const facts = routeFacts(app);
  const usedTags = new Set<string>();
  for (const pathItem of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!operation) continue;
      completeOperation(method, operation, operation.operationId ? facts.get(operation.operationId) : undefined);
      for (const response of Object.values(operation.responses)) {
        if (response && !('$ref' in response)) localiseExamples(response, config.docsUrl);
      }
      for (const tag of operation.tags ?? []) usedTags.add(tag);
    }
  }
  document.tags = [...usedTags]
    .sort((a, b) => tagRank(a) - tagRank(b) || a.localeCompare(b))
    .map((name) => (TAGS[name] ? { name, description: TAGS[name] } : { name }));

  document.components = document.components ?? {};
  document.components.headers = { ...document.components.headers, ...HEADERS };
  document.components.schemas = {
    ...document.components.schemas,
    ErrorObject: {
      type: 'object',
      required: ['type', 'code', 'message', 'param', 'request_id', 'doc_url', 'retryable'],
      properties: {
        type: { type: 'string', enum: [...ERROR_TYPES], description: 'Family; branch on it first.' },
        code: { type: 'string', enum: [...ERROR_CODES], description: 'Permanent machine-readable code.' },
        message: { type: 'string', description: 'How to recover, for people; never parse it.' },
        param: {
          type: ['string', 'null'],
          description: 'The offending field as a path, e.g. inputs[0].source_url.',
        },
        request_id: { type: 'string', description: 'Equals the X-Request-Id response header.' },
        doc_url: { type: 'string', format: 'uri', description: '{DOCS_URL}/errors.html#<code>' },
        retryable: { type: 'boolean', description: 'True where an automatic retry (with backoff) is appropriate.' },
        details: { type: 'object', additionalProperties: true, description: 'Structured facts of some codes.' },
      },
    },
    ErrorEnvelope: {
      type: 'object',
      required: ['error'],
      properties: { error: { $ref: '#/components/schemas/ErrorObject' } },
    },
  };
  document.webhooks = webhooksOf();
  addSuccessExamples(document);
  shareErrorResponses(document);
  return document;
}

/** Where each reference is served: Swagger UI at the path, the document as JSON and YAML beside it. */
export const REFERENCE_PATHS: Record<Audience, string> = { customer: 'docs', operator: 'docs/operator' };

/**
 * The customer reference (Swagger UI at /docs, the document at /docs/openapi.json and .yaml), the
 * operator reference (/docs/operator, /docs/operator/openapi.json and .yaml) and the error reference
 * at /docs/errors.html.
 */
export function setupDocs(app: NestFastifyApplication, config: AppConfig): void {
  const errorsPage = renderErrorsPage(config.docsUrl);
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get('/docs/errors.html', (_request, reply) => {
    void reply.type('text/html; charset=utf-8').send(errorsPage);
  });
  serveSwaggerUiAssets(fastify);
  let whole: OpenAPIObject | undefined;
  const document = () => (whole ??= buildOpenApiDocument(app, config));
  for (const audience of ['customer', 'operator'] as const) {
    const path = REFERENCE_PATHS[audience];
    let reference: OpenAPIObject | undefined;
    const referenceOf = () => (reference ??= referenceFor(document(), audience, config.docsUrl));
    const documentUrls = { jsonDocumentUrl: `${path}/openapi.json`, yamlDocumentUrl: `${path}/openapi.yaml` };
    // The published document (OpenAPI 3.1, for tools and the SDK's types) ...
    SwaggerModule.setup(path, app, referenceOf, { ...documentUrls, ui: false, raw: ['json', 'yaml'] });
    // ... and the page, which draws the same reference from its 3.0 rendition (swagger-ui-rendition.ts).
    let page: StaticFile | undefined;
    const title = audience === 'customer' ? 'mediajobs API' : 'mediajobs operator API';
    const servePage = (request: FastifyRequest, reply: FastifyReply) => {
      page ??= staticFile('index.html', Buffer.from(swaggerUiPage(title, swaggerUiRendition(referenceOf()))), false);
      return sendStaticFile(request, reply, page);
    };
    // Swagger UI styles its elements inline at run time (common/http/security-headers.ts).
    for (const route of [`/${path}`, `/${path}/`, `/${path}/index.html`])
      fastify.get(route, { config: { inlineStyles: true } }, servePage);
  }
}
