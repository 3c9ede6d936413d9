// A client generated from the live document by a tool nobody here wrote (openapi-typescript) types
// the success bodies: a small program reading billing.charged_credits, items[0].output.url and
// error.details type-checks, and the same program misreading them does not (so nothing is `any`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApi, type TestApi } from '../support/app';
import { typesFolder, type TypesFolder } from '../support/generated-types';

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

/** A source is a URL or an upload, told apart by type. */
export function sourceOf(job: Job): string | undefined {
  const source = job.items[0]?.source;
  if (!source) return undefined;
  return source.type === 'url' ? source.url : source.upload_id;
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
  let folder: TypesFolder;

  beforeAll(async () => {
    api = await startApi();
    folder = await typesFolder(api, 'openapi-types');
  });

  afterAll(async () => {
    await api.close();
    folder?.remove();
  });

  it('type-checks a program that reads billing.charged_credits, items[0].output.url and error.details', async () => {
    const generated = await folder.generate();
    expect({ code: generated.code, output: generated.code ? generated.output : '' }).toEqual({ code: 0, output: '' });
    const schema = readFileSync(join(folder.dir, 'schema.d.ts'), 'utf8');
    expect(schema).toContain('charged_credits: number');

    const checked = await folder.typeCheck('reader.ts', PROGRAM, {
      target: 'es2022',
      module: 'esnext',
      moduleResolution: 'bundler',
      types: [],
      lib: ['es2022'],
    });
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);
  });
});
