// A client generated from the live document by a tool nobody here wrote (openapi-typescript) types
// the success bodies: a small program reading billing.charged_credits, items[0].output.url and
// error.details type-checks, and the same program misreading them does not (so nothing is `any`).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startApi, type TestApi } from '../support/app';

const ROOT = resolve(__dirname, '../..');

function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolvePromise) => {
    execFile(command, args, { cwd, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolvePromise({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

const PROGRAM = `
import type { components, paths } from './schema';

type Job = paths['/v1/sdr2hdr/jobs/{job_id}']['get']['responses'][200]['content']['application/json'];
type JobPage = paths['/v1/audio/jobs']['get']['responses'][200]['content']['application/json'];
type Envelope = components['schemas']['ErrorEnvelope'];
type Event = components['schemas']['WebhookEvent'];
type NewKey = paths['/v1/account/api-keys']['post']['responses'][201]['content']['application/json'];

export function charged(job: Job): number {
  return job.billing.charged_credits;
}

export function firstOutputUrl(job: Job): string | undefined {
  return job.items[0]?.output?.url;
}

export function errorDetails(envelope: Envelope): { [key: string]: unknown } | undefined {
  return envelope.error.details;
}

/** The job's error, an item's and a webhook event's are one type. */
export function sameErrors(job: Job, event: Event): Envelope['error'][] {
  const all: (Envelope['error'] | null)[] = [job.error, job.items[0]?.error ?? null, event.data.error];
  return all.filter((error): error is Envelope['error'] => error !== null);
}

export function nextCursor(page: JobPage): string | null {
  return page.has_more ? page.next_cursor : null;
}

export function secret(key: NewKey): string {
  return key.key;
}

export function misreadings(job: Job, envelope: Envelope): void {
  // @ts-expect-error there is no such field
  void job.billing.charged_credit;
  // @ts-expect-error output is null until the item succeeded
  void job.items[0].output.url;
  // @ts-expect-error details is optional
  void Object.keys(envelope.error.details);
  // @ts-expect-error status is an enum, not any string
  const status: Job['status'] = 'done';
  void status;
  // @ts-expect-error started_at may be null
  void job.started_at.length;
}
`;

describe('types generated from /docs/openapi.json (openapi-typescript)', () => {
  let api: TestApi;
  let dir: string;

  beforeAll(async () => {
    api = await startApi();
    dir = mkdtempSync(join(tmpdir(), 'mediajobs-openapi-types-'));
    const response = await fetch(`${api.url}/docs/openapi.json`);
    writeFileSync(join(dir, 'openapi.json'), await response.text());
  });

  afterAll(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('type-checks a program that reads billing.charged_credits, items[0].output.url and error.details', async () => {
    const generated = await run(
      join(ROOT, 'node_modules/.bin/openapi-typescript'),
      [join(dir, 'openapi.json'), '--output', join(dir, 'schema.d.ts')],
      dir,
    );
    expect({ code: generated.code, output: generated.code ? generated.output : '' }).toEqual({ code: 0, output: '' });
    const schema = readFileSync(join(dir, 'schema.d.ts'), 'utf8');
    expect(schema).toContain('charged_credits: number');

    writeFileSync(join(dir, 'reader.ts'), PROGRAM);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'esnext',
          moduleResolution: 'bundler',
          types: [],
          lib: ['es2022'],
        },
        files: ['reader.ts'],
      }),
    );
    const checked = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json')], dir);
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);
  });
});
