// What Swagger UI is given to draw: the same reference in OpenAPI 3.0.3. Swagger UI 5 runs every 3.1
// document through its ApiDOM normaliser before it draws an operation; on the customer reference that
// was about 500 ms of a 1.3 s wait (the same document as 3.0: 0.8 s, in one Chromium run). The
// published documents (/docs/openapi.json, .yaml) stay 3.1 for tools and the SDK's types; only the
// page's copy is rewritten, and only by the few constructs our document uses, each with its 3.0
// equivalent, so the page shows the same operations, fields and examples.
import type { OpenAPIObject, OperationObject, PathItemObject } from '@nestjs/swagger';

type Json = unknown;
type JsonObject = Record<string, Json>;

/** Where the webhooks are shown in 3.0: as callbacks of the operation that registers the endpoint. */
const WEBHOOK_REGISTRATION = { path: '/v1/webhook-endpoints', method: 'post' } as const;

const isObject = (value: Json): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNullSchema = (value: Json): boolean =>
  isObject(value) && value.type === 'null' && Object.keys(value).length === 1;

/** One schema (and everything under it) in 3.0 form: `null` as a type becomes `nullable: true`. */
function toOpenApi30(node: Json): Json {
  if (Array.isArray(node)) return node.map(toOpenApi30);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) out[key] = toOpenApi30(value);

  // `type: ['string', 'null']` → `type: 'string', nullable: true` (we never list two non-null types).
  if (Array.isArray(out.type)) {
    const types = out.type.filter((type) => type !== 'null');
    if (types.length < out.type.length) out.nullable = true;
    out.type = types[0];
  }
  // `anyOf/oneOf: [X, {type: 'null'}]` → `allOf: [X], nullable: true` (3.0 ignores siblings of a bare $ref).
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const members = out[keyword];
    if (!Array.isArray(members) || !members.some(isNullSchema)) continue;
    const rest = members.filter((member) => !isNullSchema(member));
    delete out[keyword];
    if (rest.length === 1) out.allOf = rest;
    else out[keyword] = rest;
    out.nullable = true;
  }
  return out;
}

/** The reference as Swagger UI should draw it: OpenAPI 3.0.3, webhooks as callbacks. */
export function swaggerUiRendition(document: OpenAPIObject): OpenAPIObject {
  const { webhooks, ...rest } = document as OpenAPIObject & { webhooks?: Record<string, PathItemObject> };
  const rendition = toOpenApi30(rest) as OpenAPIObject;
  rendition.openapi = '3.0.3';
  const registration = rendition.paths[WEBHOOK_REGISTRATION.path]?.[WEBHOOK_REGISTRATION.method] as
    OperationObject | undefined;
  if (webhooks && registration) {
    // Each event is a request we send to the URL the endpoint was registered with.
    registration.callbacks = Object.fromEntries(
      Object.entries(webhooks).map(([event, pathItem]) => [
        event,
        { '{$request.body#/url}': toOpenApi30(pathItem) as PathItemObject },
      ]),
    );
  }
  return rendition;
}
