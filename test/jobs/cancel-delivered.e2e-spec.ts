// A cancel after some of a job's items were delivered (issue 36 item 1): the delivered items are paid
// for — their outputs stay downloadable — and only the rest of the hold is released. Real API, real
// worker (two items at once) and ffmpeg; the second input's host holds its download, so the first
// item has ended while the job is still processing, every run.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestApi } from '../support/app';
import { credits, upload } from '../support/jobs';
import { startMediaOrigin, type MediaOrigin } from '../support/media-origin';
import { auditMoney, listAll, pollUntil } from '../support/processes';
import {
  deleteRegisteredEndpoints,
  registerEndpoint,
  startReceiver,
  verify,
  type Receiver,
} from '../support/webhook-receiver';
import { startStack } from '../support/worker';

const GRANT = 100;

describe('a cancel after an item was delivered', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;
  let origin: MediaOrigin;
  let hook: Receiver;

  beforeAll(async () => {
    origin = await startMediaOrigin();
    stack = await startStack({
      REGION: 'cancel-delivered',
      WORKER_CONCURRENCY: '2',
      ALLOW_PRIVATE_URLS: '127.0.0.1',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-cancel-delivered-')),
    });
    api = stack.api;
    hook = await startReceiver();
  });

  afterAll(async () => {
    await hook?.stop();
    if (api) await deleteRegisteredEndpoints(api);
    await stack?.close();
    await origin?.close();
  });

  it('charges the delivered item (captured from the hold, the rest released) and keeps its output; the view, ledger, webhook and audit agree', async () => {
    const account = await createAccount(api, { credits: GRANT });
    const endpoint = await registerEndpoint(api, account.apiKey, hook.url(), ['job.cancelled']);
    const short = await upload(api, account.apiKey, await sdrMp4({ width: 160, height: 90, seconds: 2, audio: false }));
    origin.serve('held.mp4', await sdrMp4({ width: 160, height: 90, seconds: 4, audio: false }));
    const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
      key: account.apiKey,
      body: { inputs: [{ upload_id: short }, { source_url: origin.url('held.mp4') }] },
    });
    expect(submitted.status).toBe(202);
    // Probed at submit; from now on the host holds the worker's download of the second input.
    origin.delay('held.mp4', 25_000);
    const path = `/v1/sdr2hdr/jobs/${submitted.body.job_id}`;
    const before = await pollUntil(
      'item 0 delivered while the job still processes',
      async () => {
        const view = (await call(api, 'GET', path, { key: account.apiKey })).body;
        return view.items[0].status === 'succeeded' ? view : undefined;
      },
      20_000,
    );
    expect(before.status).toBe('processing');
    const delivered = before.items[0].charged_credits as number;
    expect(delivered).toBeGreaterThan(0);
    const held = before.billing.estimated_credits as number;
    expect(held).toBeGreaterThan(delivered);

    const cancelled = await call(api, 'POST', `${path}/cancel`, { key: account.apiKey });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      error: { code: 'job_cancelled' },
      billing: { estimated_credits: held, charged_credits: delivered, refunded: false, state: 'settled' },
      items: [
        { index: 0, status: 'succeeded', charged_credits: delivered },
        { index: 1, status: 'cancelled', charged_credits: 0, output: null },
      ],
    });

    // What was paid for is delivered: the output and its light map download.
    const output = cancelled.body.items[0].output;
    for (const url of [output.url, output.light_map_url]) {
      const download = await fetch(url);
      expect(download.status).toBe(200);
      expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    expect(output.video).toMatchObject({ codec: 'hevc', hdr: 'HDR10' });

    // The ledger: one authorise, and the one settlement of the hold — a capture of the delivered item's
    // charge and a release of the rest.
    const ledger = (await listAll(api, account.apiKey, '/v1/account/ledger'))
      .filter((entry) => entry.job_id === submitted.body.job_id)
      .map((entry) => [entry.kind, entry.credits])
      .sort();
    expect(ledger).toEqual(
      [
        ['authorise', held],
        ['capture', delivered],
        ['release', held - delivered],
      ].sort(),
    );
    expect(await credits(api, account.apiKey)).toMatchObject({
      balance_credits: GRANT - delivered,
      reserved_credits: 0,
      running_jobs: 0,
    });

    // The webhook carries the same charge, item by item.
    const [request] = await hook.waitFor(1);
    const event = verify(endpoint.secret, request);
    expect(event).toMatchObject({
      event: 'job.cancelled',
      data: {
        job: { job_id: submitted.body.job_id },
        error: cancelled.body.error,
        items: [
          { index: 0, status: 'succeeded', charged_credits: delivered },
          { index: 1, status: 'cancelled', charged_credits: 0, output: null },
        ],
      },
    });

    // Read again, nothing has moved; the money audit finds it exact.
    const after = (await call(api, 'GET', path, { key: account.apiKey })).body;
    expect(after.billing).toEqual(cancelled.body.billing);
    expect((await auditMoney(api, account.apiKey, [after], GRANT)).problems).toEqual([]);
  });
});
