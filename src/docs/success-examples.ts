// An example body for every success response of the document, assembled from its schema: each
// property's own `example`, else the first enum value, else a value of its type and format. So an
// example cannot disagree with its schema, and a class author writes examples once, per property.
import type { OpenAPIObject, ResponseObject } from '@nestjs/swagger';

type Schema = Record<string, unknown>;

const SAMPLE_BY_FORMAT: Record<string, string> = {
  'date-time': '2026-01-15T09:30:00.000Z',
  date: '2026-01-15',
  uri: 'https://api.mediajobs.example/v1/resource',
  email: 'ada@example.com',
};

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  return typeof schema.type === 'string' ? [schema.type] : [];
}

export function exampleFromSchema(schema: Schema | undefined, schemas: Record<string, Schema>, depth = 0): unknown {
  if (!schema || depth > 40) return null;
  if (typeof schema.$ref === 'string') {
    return exampleFromSchema(schemas[schema.$ref.replace('#/components/schemas/', '')], schemas, depth + 1);
  }
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    const members = schema[key] as Schema[] | undefined;
    if (!Array.isArray(members)) continue;
    if (key === 'allOf') {
      return Object.assign({}, ...members.map((member) => exampleFromSchema(member, schemas, depth + 1) as object));
    }
    const first = members.find((member) => !typesOf(member).includes('null') || typesOf(member).length > 1);
    return exampleFromSchema(first ?? members[0], schemas, depth + 1);
  }
  const types = typesOf(schema).filter((type) => type !== 'null');
  const type = types[0] ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      // Optional properties appear only when they carry an example of their own (one of alternatives).
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([name, property]) => required.includes(name) || 'example' in property)
          .map(([name, property]) => [name, exampleFromSchema(property, schemas, depth + 1)]),
      );
    }
    case 'array':
      return [exampleFromSchema(schema.items as Schema | undefined, schemas, depth + 1)];
    case 'string':
      return SAMPLE_BY_FORMAT[schema.format as string] ?? 'string';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

type Operation = {
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, { schema?: Schema; example?: unknown; examples?: unknown }> };
};

/**
 * Gives every 2xx JSON response, every JSON request body and every webhook body without an example
 * one built from its schema. A request body needs its own: without one, Swagger UI's "Try it out"
 * fills in every property, alternatives together (source_url, upload_id and media in one input),
 * which the API refuses; this example holds the required properties and those with an example.
 */
export function addSuccessExamples(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem as Record<string, Operation>)) {
      const request = operation?.requestBody?.content?.['application/json'];
      if (request?.schema && request.example === undefined && !request.examples)
        request.example = exampleFromSchema(request.schema, schemas);
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        if (!/^2/.test(status) || !response || '$ref' in (response as object)) continue;
        const media = (response as ResponseObject).content?.['application/json'];
        if (!media?.schema || media.example !== undefined || media.examples) continue;
        media.example = exampleFromSchema(media.schema as Schema, schemas);
      }
    }
  }
  for (const pathItem of Object.values(document.webhooks ?? {})) {
    const body = (
      pathItem as { post?: { requestBody?: { content?: Record<string, { schema?: Schema; example?: unknown }> } } }
    ).post?.requestBody;
    const media = body?.content?.['application/json'];
    if (media?.schema && media.example === undefined) media.example = exampleFromSchema(media.schema, schemas);
  }
}
