// The SDK's and the dashboard's wire types (sdk/src/generated/openapi.ts) are generated from the
// service's OpenAPI document: this fails while the committed file differs from what
// `npm run generate:types` writes now (change a DTO, forget to regenerate: red), and while the
// document that script builds without a database differs from the one the running API serves.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { referenceFor } from '../../src/docs/references';
import { buildDocumentOffline, OFFLINE_DOCUMENT_CONFIG } from '../../src/openapi';
import { startApi, type TestApi } from '../support/app';

const ROOT = resolve(__dirname, '../..');
const COMMITTED = join(ROOT, 'sdk/src/generated/openapi.ts');

function generate(documentFile: string, out: string): Promise<string> {
  return new Promise((done, fail) =>
    execFile(
      process.execPath,
      [join(ROOT, 'scripts/generate-types.js'), '--document', documentFile, '--out', out],
      { cwd: ROOT, timeout: 120_000 },
      (error, _stdout, stderr) => (error ? fail(new Error(`generate-types failed: ${stderr}`)) : done(out)),
    ),
  );
}

/** Where two texts first differ, as "line N: committed … / generated …" (the files are too long to diff in a message). */
function firstDifference(committed: string, generated: string): string | null {
  const a = committed.split('\n');
  const b = generated.split('\n');
  for (let line = 0; line < Math.max(a.length, b.length); line += 1) {
    if (a[line] !== b[line])
      return `line ${line + 1}: committed ${JSON.stringify(a[line])} / generated ${JSON.stringify(b[line])}`;
  }
  return null;
}

describe('the generated wire types', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mj-wire-types-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are what `npm run generate:types` writes from the current code (run it and commit the file when this fails)', async () => {
    const documentFile = join(dir, 'openapi.json');
    writeFileSync(documentFile, JSON.stringify(await buildDocumentOffline()));
    const generated = readFileSync(await generate(documentFile, join(dir, 'openapi.ts')), 'utf8');
    expect(generated).toContain('export interface paths');
    expect({ stale: firstDifference(readFileSync(COMMITTED, 'utf8'), generated) }).toEqual({ stale: null });
  }, 120_000);

  describe('the document they are generated from', () => {
    let api: TestApi;

    beforeAll(async () => {
      api = await startApi();
    });
    afterAll(() => api?.close());

    it('is built without a database the same as the running API serves it (both references)', async () => {
      const offline = await buildDocumentOffline();
      for (const [audience, path] of [
        ['customer', '/docs/openapi.json'],
        ['operator', '/docs/operator/openapi.json'],
      ] as const) {
        const served = (await (await fetch(`${api.url}${path}`)).text())
          .split(api.config.publicBaseUrl)
          .join(OFFLINE_DOCUMENT_CONFIG.publicBaseUrl);
        expect(JSON.parse(served)).toEqual(referenceFor(offline, audience, OFFLINE_DOCUMENT_CONFIG.docsUrl));
      }
    });
  });
});
