// The page that draws a reference with Swagger UI (swagger-ui-dist, the bundle Swagger publishes). Our
// own, rather than @nestjs/swagger's, because that one makes the reader wait: it loads a second script
// (the standalone preset, 260 KB, for a top bar with a URL field we hide), starts Swagger UI only at
// window.onload, and ships the document as a pretty-printed JavaScript literal. Here the document
// travels in the page as a JSON data block, read while the bundle is still being compiled, and Swagger
// UI starts as soon as its bundle has run (docs/performance.md: the docs render).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sendStaticFile, staticFile, type StaticFile } from '../common/http/static-files';

/** Where Swagger UI's files are served: one place for both references. */
const SWAGGER_UI_ASSETS_PATH = '/docs/swagger-ui';

/** The files of swagger-ui-dist a page uses, and the script that starts it. */
const DIST_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-32x32.png', 'favicon-16x16.png'];
const INIT_FILE = 'mediajobs-init.js';

/**
 * Swagger UI's options on our pages (also what bench/docs.ts gives bare Swagger UI to tell the options'
 * cost from the page's). `persistAuthorization`: the API key typed into "Authorize" survives a reload
 * (kept in the browser only). No badge from validator.swagger.io: the page makes no third-party
 * requests. The Schemas section at the end repeats the models every operation already shows (its
 * "Schema" tab); not drawing it saves a fifth of the render.
 */
export const SWAGGER_UI_OPTIONS = {
  deepLinking: true,
  validatorUrl: null,
  displayOperationId: true,
  persistAuthorization: true,
  defaultModelsExpandDepth: -1,
} as const;

/** Starts Swagger UI on the reference embedded in the page. */
const INIT_SCRIPT = `"use strict";
window.ui = SwaggerUIBundle(Object.assign({
  spec: JSON.parse(document.getElementById("reference").textContent),
  dom_id: "#swagger-ui",
}, ${JSON.stringify(SWAGGER_UI_OPTIONS)}));
`;

let assets: Map<string, StaticFile> | undefined;

/** Read on first use: an API that nobody asks for docs never holds Swagger UI's 1.6 MB in memory. */
function swaggerUiAssets(): Map<string, StaticFile> {
  if (assets) return assets;
  const dist = dirname(require.resolve('swagger-ui-dist/package.json'));
  assets = new Map(DIST_FILES.map((name) => [name, staticFile(name, readFileSync(join(dist, name)), true)]));
  assets.set(INIT_FILE, staticFile(INIT_FILE, Buffer.from(INIT_SCRIPT), true));
  return assets;
}

/** `/docs/swagger-ui/<file>?v=<etag>`: the version in the URL lets browsers keep each file for good. */
function assetUrl(name: string): string {
  const file = swaggerUiAssets().get(name)!;
  return `${SWAGGER_UI_ASSETS_PATH}/${name}?v=${encodeURIComponent(file.etag.slice(1, 13))}`;
}

/** Serves Swagger UI's files under SWAGGER_UI_ASSETS_PATH (nothing else of swagger-ui-dist). */
export function serveSwaggerUiAssets(fastify: FastifyInstance): void {
  fastify.get<{ Params: { file: string } }>(`${SWAGGER_UI_ASSETS_PATH}/:file`, (request, reply) => {
    const file = swaggerUiAssets().get(request.params.file);
    if (!file) return reply.callNotFound();
    return sendStaticFile(request, reply, file);
  });
}

/**
 * The page for one reference: `document` is what Swagger UI draws (its 3.0 rendition). `<` is escaped
 * so no text of the document can close the data block.
 */
export function swaggerUiPage(title: string, document: object): string {
  const json = JSON.stringify(document).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${assetUrl('swagger-ui.css')}">
<link rel="icon" type="image/png" href="${assetUrl('favicon-32x32.png')}" sizes="32x32">
<link rel="icon" type="image/png" href="${assetUrl('favicon-16x16.png')}" sizes="16x16">
<style>html{box-sizing:border-box;overflow-y:scroll}*,*::before,*::after{box-sizing:inherit}body{margin:0;background:#fafafa}</style>
</head>
<body>
<div id="swagger-ui"></div>
<script id="reference" type="application/json">${json}</script>
<script src="${assetUrl('swagger-ui-bundle.js')}"></script>
<script src="${assetUrl(INIT_FILE)}"></script>
</body>
</html>
`;
}
