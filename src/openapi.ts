// The service's OpenAPI document without running the service (`node dist/src/openapi.js > openapi.json`):
// no PostgreSQL, Redis or port. Nest's preview mode builds the module graph (controllers, their
// decorators) without instantiating a provider, which is all the document is made of. The wire types
// of the SDK and the dashboard are generated from this (scripts/generate-types.js).
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from './app.module';
import { parseConfig, type AppConfig } from './common/config/config';
import { buildOpenApiDocument } from './docs/setup-docs';

/**
 * The configuration the document is built with: the defaults, never the caller's environment, so the
 * document (and the types generated from it) is the same on every machine.
 */
export const OFFLINE_DOCUMENT_CONFIG: AppConfig = parseConfig({ NODE_ENV: 'development' });

/** The whole document (customers' and operators' operations), as the API built with `config` serves it. */
export async function buildDocumentOffline(config: AppConfig = OFFLINE_DOCUMENT_CONFIG): Promise<OpenAPIObject> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forApi(config), new FastifyAdapter(), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app, config);
  } finally {
    await app.close();
  }
}

if (require.main === module) {
  buildDocumentOffline().then(
    (document) => process.stdout.write(`${JSON.stringify(document, null, 2)}\n`),
    (error: unknown) => {
      process.stderr.write(
        `Could not build the OpenAPI document: ${error instanceof Error ? error.stack : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
