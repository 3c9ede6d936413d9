// Jest setupFilesAfterEnv: fails a test whose API responses did not match the OpenAPI document
// (strict mode), and leaves this file's counts for global-teardown.ts to print.
import { tally, VALIDATION_MODE, writeFileReport, type Mismatch } from './openapi-validation';

function describeMismatches(mismatches: Mismatch[]): string {
  return mismatches.map((m) => `${m.where}: ${m.problem}\n    body: ${m.body}`).join('\n');
}

afterEach(() => {
  const mismatches = tally.unreported.splice(0);
  if (VALIDATION_MODE === 'strict' && mismatches.length > 0) {
    throw new Error(
      `${mismatches.length} response(s) do not match the OpenAPI references (/docs/openapi.json, /docs/operator/openapi.json); describe the ` +
        `field in the route's response class, or fix the response:\n${describeMismatches(mismatches)}`,
    );
  }
});

afterAll(() => {
  // Responses sent after the last test (teardown) still count, and still fail the file when strict.
  const late = tally.unreported.splice(0);
  writeFileReport(expect.getState().testPath ?? 'unknown');
  if (VALIDATION_MODE === 'strict' && late.length > 0) {
    throw new Error(`responses that do not match the OpenAPI document:\n${describeMismatches(late)}`);
  }
});
