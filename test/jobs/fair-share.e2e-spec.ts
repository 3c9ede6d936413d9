// A fair share of the workers (issue 37): one account's backlog never starves another's job. The real
// API and worker (one worker, two items at once) and ffmpeg: account A submits 20 items, then account
// B one item; B's job ends within the time of a few items and never later than 35 % of the time A's
// 20 items take. Under first-in-first-out B's job ended last, after all of A's.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sdrMp4 } from '../fixtures/media';
import { call, createAccount, type TestApi } from '../support/app';
import { upload } from '../support/jobs';
import { auditMoney, pollUntil } from '../support/processes';
import { startStack } from '../support/worker';

const GRANT = 10_000;
const A_ITEMS = 20;

describe('a fair share of the workers', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let api: TestApi;

  beforeAll(async () => {
    stack = await startStack({
      REGION: 'fair-share',
      WORKER_CONCURRENCY: '2',
      STORAGE_DIR: await mkdtemp(join(tmpdir(), 'mj-fair-share-')),
    });
    api = stack.api;
  });
  afterAll(() => stack?.close(), 60_000);

  it("a 1-item job behind another account's 20 items ends within a few items' time, under 35 % of theirs", async () => {
    const a = await createAccount(api, { plan: 'pro', credits: GRANT });
    const b = await createAccount(api, { plan: 'pro', credits: GRANT });
    // 2 s clips (the issue's), at the smallest size: each item still takes a worker slot for a while.
    const clip = await sdrMp4({ width: 160, height: 90, seconds: 2, audio: false });
    const aClip = await upload(api, a.apiKey, clip);
    const bClip = await upload(api, b.apiKey, clip);
    const submit = async (key: string, uploads: string[]) => {
      const submitted = await call(api, 'POST', '/v1/sdr2hdr/jobs', {
        key,
        body: { inputs: uploads.map((upload_id) => ({ upload_id })) },
      });
      expect(submitted.status).toBe(202);
      return `/v1/sdr2hdr/jobs/${submitted.body.job_id}`;
    };
    const view = async (key: string, path: string) => (await call(api, 'GET', path, { key })).body;

    const aStart = Date.now();
    const aPath = await submit(
      a.apiKey,
      Array.from({ length: A_ITEMS }, () => aClip),
    );
    // B comes once A's 20 items are all queued ahead of it (A's job has been fanned out and started).
    await pollUntil('A processing', async () => (await view(a.apiKey, aPath)).status === 'processing', 60_000, 50);
    const bStart = Date.now();
    const bPath = await submit(b.apiKey, [bClip]);

    const bEnd = await pollUntil(
      "B's job ended",
      async () => {
        const [bView, aView] = await Promise.all([view(b.apiKey, bPath), view(a.apiKey, aPath)]);
        if (bView.status === 'processing' || bView.status === 'queued') return undefined;
        return { at: Date.now(), bView, aEnded: aView.items.filter((item: any) => item.status === 'succeeded').length };
      },
      600_000,
      100,
    );
    const aView = await pollUntil(
      "A's job ended",
      async () => {
        const found = await view(a.apiKey, aPath);
        return found.status === 'processing' || found.status === 'queued' ? undefined : found;
      },
      900_000,
      200,
    );
    const aSeconds = (Date.now() - aStart) / 1000;
    const bSeconds = (bEnd.at - bStart) / 1000;
    process.stdout.write(
      `fair share: B ended in ${bSeconds.toFixed(1)} s (${A_ITEMS} items of A took ${aSeconds.toFixed(1)} s: ` +
        `${((100 * bSeconds) / aSeconds).toFixed(1)} %), ${bEnd.aEnded} of A's items ended before it\n`,
    );

    expect(bEnd.bView.status).toBe('succeeded');
    expect(aView.status).toBe('succeeded');
    // Within the time of a few items: at most 4 of A's 20 ended before B's one item (first-in-first-out: all 20).
    expect(bEnd.aEnded).toBeLessThanOrEqual(4);
    expect(bSeconds).toBeLessThanOrEqual(0.35 * aSeconds);
    // Money exact for both accounts.
    expect((await auditMoney(api, a.apiKey, [aView], GRANT)).problems).toEqual([]);
    expect((await auditMoney(api, b.apiKey, [bEnd.bView], GRANT)).problems).toEqual([]);
  }, 1_200_000);
});
