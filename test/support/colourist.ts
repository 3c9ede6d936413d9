// The HDR colourist's tests (issue 40) in three files that two Jest workers run side by side
// (test/jobs/hdr-colourist-chart, -levels and -gradient.e2e-spec.ts): each starts an API and
// a worker of its own, submits sdr2hdr jobs through the API and downloads what they made.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { colourChartMp4 } from '../fixtures/media';
import { call, createAccount, type TestAccount, type TestApi } from './app';
import { readChart, type ChartReading } from './hdr-chart';
import { upload, waitForJob } from './jobs';
import { startStack } from './worker';

export type Output = { mapping?: 'reference' | 'expand'; transfer?: 'pq' | 'hlg'; peak_nits?: number };
/** `expand` in each transfer and peak the issue's targets name: PQ at 1000 and 4000 cd/m², and HLG. */
export const EXPANDED: Output[] = [
  { mapping: 'expand', transfer: 'pq', peak_nits: 1000 },
  { mapping: 'expand', transfer: 'pq', peak_nits: 4000 },
  { mapping: 'expand', transfer: 'hlg' },
];
const label = (output: Output) =>
  `${output.mapping ?? 'reference'} ${output.transfer ?? 'pq'}${output.peak_nits ? ` ${output.peak_nits}` : ''}`;

export interface Colourist {
  /** Submits one sdr2hdr job; the job view and the downloaded output, once it succeeded. */
  made(source: string, output: Output): Promise<{ job: any; file: string }>;
  /** The chart through `output`, read once per output (several tests look at one). */
  chart(output: Output): Promise<ChartReading>;
}

/** Starts the stack in `beforeAll` and closes it in `afterAll` of the calling describe. */
export function colourist(region: string): Colourist {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let account: TestAccount;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `mj-${region}-`));
    stack = await startStack({ REGION: region, STORAGE_DIR: join(dir, 'store'), WORKER_CONCURRENCY: '2' });
    api = stack.api;
    account = await createAccount(api, { credits: 1000 });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function made(source: string, output: Output): Promise<{ job: any; file: string }> {
    const uploadId = await upload(api, account.apiKey, source);
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: uploadId }], output },
    });
    expect(submitted.status).toBe(202);
    const job = await waitForJob(api, account.apiKey, `/v1/sdr2hdr/jobs/${submitted.body.job_id}`, undefined, 240_000);
    expect({ output, status: job.status }).toEqual({ output, status: 'succeeded' });
    const file = join(dir, `${submitted.body.job_id}.mp4`);
    await writeFile(file, Buffer.from(await (await fetch(job.items[0].output.url)).arrayBuffer()));
    return { job, file };
  }

  const charts = new Map<string, Promise<ChartReading>>();
  function chart(output: Output): Promise<ChartReading> {
    const key = label(output);
    if (!charts.has(key))
      charts.set(
        key,
        colourChartMp4()
          .then((source) => made(source, output))
          .then(({ file }) => readChart(file, output.transfer ?? 'pq')),
      );
    return charts.get(key)!;
  }

  return { made, chart };
}
