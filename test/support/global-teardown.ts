import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { dropRunDatabases } from './global-setup';
import { reportDir, type Mismatch } from './openapi-validation';
import { stopRunPgBouncer } from './pgbouncer';

/** Adds up what each test file checked against the OpenAPI document and prints one line (plus mismatches). */
function printOpenApiReport(): void {
  const file = join(reportDir(), 'results.jsonl');
  if (!existsSync(file)) return;
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { file: string; validated: number; skipped: number; mismatches: Mismatch[] });
  const validated = rows.reduce((sum, row) => sum + row.validated, 0);
  const mismatches = rows.flatMap((row) => row.mismatches.map((m) => ({ ...m, file: row.file })));
  const distinct = new Map(mismatches.map((m) => [`${m.where}: ${m.problem}`, m]));
  if (distinct.size > 0) {
    process.stdout.write(`\nOpenAPI mismatches (${mismatches.length}, ${distinct.size} distinct):\n`);
    for (const [line, m] of distinct) process.stdout.write(`  ${line}\n    ${m.file}\n    body: ${m.body}\n`);
  }
  process.stdout.write(
    `\nOpenAPI validation: ${validated} JSON responses checked against the references (/docs/openapi.json, /docs/operator/openapi.json) in ${rows.length} test ` +
      `files, ${mismatches.length} mismatches\n`,
  );
  rmSync(reportDir(), { recursive: true, force: true });
}

export default async function globalTeardown(): Promise<void> {
  printOpenApiReport();
  stopRunPgBouncer();
  if (process.env.TEST_RUN_DATABASE) await dropRunDatabases(process.env.TEST_RUN_DATABASE);
}
