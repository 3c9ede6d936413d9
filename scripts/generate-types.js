#!/usr/bin/env node
// `npm run generate:types`: writes the wire types the SDK and the dashboard share
// (sdk/src/generated/openapi.ts) from the service's own OpenAPI document, built without a database
// or Redis (src/openapi.ts, compiled to dist/ first by the npm script).
//   node scripts/generate-types.js                          the document built offline → the committed file
//   node scripts/generate-types.js --document d.json --out f.ts   any document → any file (the staleness test)
// The types come from openapi-typescript; the enums' values (`--enum-values`) and the schemas'
// defaults are emitted as constants too, so a client's list of statuses, scopes or option defaults is
// read from here, never retyped.
const { readFileSync, writeFileSync, mkdirSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');
const { parseArgs } = require('node:util');

const ROOT = resolve(__dirname, '..');
const WIRE_TYPES_FILE = join(ROOT, 'sdk/src/generated/openapi.ts');

/** Every `default` a schema's properties declare: { Schema: { property: value } }. */
function schemaDefaults(document) {
  const defaults = {};
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    for (const [property, definition] of Object.entries(schema.properties ?? {})) {
      if (definition && typeof definition === 'object' && 'default' in definition) {
        (defaults[name] ??= {})[property] = definition.default;
      }
    }
  }
  return defaults;
}

/** The file's text for `document` (an OpenAPI 3.1 object). */
async function renderWireTypes(document) {
  const { default: openapiTS, astToString, COMMENT_HEADER } = require('openapi-typescript');
  const ast = await openapiTS(document, { enumValues: true, defaultNonNullable: false, silent: true });
  const defaults = JSON.stringify(schemaDefaults(document), null, 4);
  return (
    `${COMMENT_HEADER}// Regenerate with \`npm run generate:types\`; test/docs/wire-types.e2e-spec.ts fails while this file is stale.\n\n` +
    `${astToString(ast)}\n` +
    "/** The value the service uses for each property a request leaves out (its schema's `default`). */\n" +
    `export const schemaDefaults = ${defaults} as const satisfies {\n` +
    '    [S in keyof components["schemas"]]?: Partial<components["schemas"][S]>;\n' +
    '};\n'
  );
}

async function main() {
  const { values } = parseArgs({ options: { document: { type: 'string' }, out: { type: 'string' } } });
  const document = values.document
    ? JSON.parse(readFileSync(values.document, 'utf8'))
    : await require(join(ROOT, 'dist/src/openapi.js')).buildDocumentOffline();
  const out = resolve(values.out ?? WIRE_TYPES_FILE);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, await renderWireTypes(document));
  process.stdout.write(`wrote ${out}\n`);
}

module.exports = { WIRE_TYPES_FILE, renderWireTypes };

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`generate-types: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
