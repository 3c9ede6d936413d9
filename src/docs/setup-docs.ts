import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { AppConfig } from '../common/config/config';
import { ERROR_CODES, ERROR_TYPES } from '../common/errors/catalogue';
import { renderErrorsPage } from './errors-page';

export function buildOpenApiDocument(app: NestFastifyApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('mediajobs API')
    .setDescription(
      'Paid asynchronous media-processing jobs (SDR→HDR10, speech loudness) and a plugin licence service. ' +
        `Every error is the envelope in ErrorEnvelope; see the [error reference](${config.docsUrl}/errors.html).`,
    )
    .setVersion('1')
    .addServer(config.publicBaseUrl)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'api_key')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Admin-Token' }, 'admin_token')
    .build();
  const document = SwaggerModule.createDocument(app, builder);
  document.components = document.components ?? {};
  document.components.schemas = {
    ...document.components.schemas,
    ErrorObject: {
      type: 'object',
      required: ['type', 'code', 'message', 'param', 'request_id', 'doc_url', 'retryable'],
      properties: {
        type: { type: 'string', enum: [...ERROR_TYPES], description: 'Family; branch on it first.' },
        code: { type: 'string', enum: ERROR_CODES, description: 'Permanent machine-readable code.' },
        message: { type: 'string', description: 'How to recover, for people; never parse it.' },
        param: { type: 'string', nullable: true, description: 'The offending field as a path, e.g. inputs[0].source_url.' },
        request_id: { type: 'string', description: 'Equals the X-Request-Id response header.' },
        doc_url: { type: 'string', format: 'uri', description: '{DOCS_URL}/errors.html#<code>' },
        retryable: { type: 'boolean' },
        details: { type: 'object', additionalProperties: true },
      },
    },
    ErrorEnvelope: {
      type: 'object',
      required: ['error'],
      properties: { error: { $ref: '#/components/schemas/ErrorObject' } },
    },
  };
  return document;
}

/** Swagger UI at /docs, the OpenAPI JSON at /docs/openapi.json, the error reference at /docs/errors.html. */
export function setupDocs(app: NestFastifyApplication, config: AppConfig): void {
  const errorsPage = renderErrorsPage();
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get('/docs/errors.html', (_request, reply) => {
    void reply.type('text/html; charset=utf-8').send(errorsPage);
  });
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app, config), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    customSiteTitle: 'mediajobs API',
  });
}
