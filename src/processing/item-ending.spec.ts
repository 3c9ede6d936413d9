import type { ItemEnding as LifecycleEnding, ItemsEnded, JobLifecycle } from '../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../jobs/job.types';
import {
  connectionLost,
  FakeRunner,
  itemRow,
  jobRow,
  MemoryStorage,
  QUICK_OUTAGES,
  silenceNestLogs,
  specConfig,
} from '../../test/support/processing-fakes';
import { ItemEnding } from './item-ending';
import type { RunItemResult } from './media-runner';

const MADE: RunItemResult = {
  ok: true,
  path: '/work/out-0.mp4',
  processedSeconds: 4,
  outputWidth: 320,
  outputHeight: 180,
  container: 'mp4',
  contentType: 'video/mp4',
  media: { codec: 'hevc' },
};

const SOURCE = { sourcePaths: ['/work/in-0.mp4'], signal: new AbortController().signal, timeLimitMs: 60_000 };

/** The lifecycle's endItems as the worker sees it: what it was asked, and what it answers (or throws). */
class FakeLifecycle {
  readonly asked: LifecycleEnding[][] = [];
  answers: (ItemsEnded | Error)[] = [];
  claimed: { job: JobRow; items: JobItemRow[] } | null = null;

  async endItems(_job: JobRow, endings: LifecycleEnding[]): Promise<ItemsEnded> {
    this.asked.push(endings);
    const answer = this.answers.shift() ?? { itemsEnded: endings.map((ending) => ending.index), jobEnded: false };
    if (answer instanceof Error) throw answer;
    return answer;
  }

  async claim(): Promise<{ job: JobRow; items: JobItemRow[] } | null> {
    return this.claimed;
  }
}

function setup() {
  const storage = new MemoryStorage();
  const lifecycle = new FakeLifecycle();
  const runner = new FakeRunner();
  const ending = new ItemEnding(
    lifecycle as unknown as JobLifecycle,
    storage.asStorage(),
    specConfig(),
    QUICK_OUTAGES,
    runner,
  );
  return { storage, lifecycle, ending, runner };
}

describe('ItemEnding', () => {
  silenceNestLogs();

  it('stores a made output under a key of its own run, then ends the item with it as its asset', async () => {
    const { storage, lifecycle, ending } = setup();
    const ended = await ending.end(jobRow(), itemRow(), MADE, SOURCE);
    expect(ended).toEqual({ outcome: 'succeeded', outputBytes: MADE.path.length });
    const [key] = [...storage.objects.keys()];
    expect(key).toMatch(/^outputs\/acct_spec\/job_spec\/0-[0-9A-Za-z]{8}\.mp4$/);
    expect(storage.objects.get(key)).toBe(MADE.path);
    expect(lifecycle.asked).toHaveLength(1);
    expect(lifecycle.asked[0][0]).toMatchObject({
      index: 0,
      status: 'succeeded',
      processedSeconds: 4,
      error: null,
      asset: { storageKey: key, container: 'mp4', contentType: 'video/mp4', media: { codec: 'hevc' } },
    });
  });

  it('PostgreSQL unreachable as the item ends: the ending is tried again and the output kept', async () => {
    const { storage, lifecycle, ending } = setup();
    lifecycle.answers = [connectionLost(), connectionLost()];
    expect((await ending.end(jobRow(), itemRow(), MADE, SOURCE)).outcome).toBe('succeeded');
    expect(lifecycle.asked).toHaveLength(3);
    // The same output each time: stored once, never removed.
    expect(new Set(lifecycle.asked.map((endings) => endings[0].asset?.storageKey)).size).toBe(1);
    expect(storage.objects.size).toBe(1);
    expect(storage.removed).toEqual([]);
  });

  it('an outage that outlasts the policy is thrown (the queue tries the unit again); other errors at once', async () => {
    const { lifecycle, ending } = setup();
    lifecycle.answers = [connectionLost(), connectionLost(), connectionLost(), connectionLost()];
    await expect(ending.end(jobRow(), itemRow(), MADE, SOURCE)).rejects.toThrow('Connection terminated');
    expect(lifecycle.asked).toHaveLength(4);
    lifecycle.asked.length = 0;
    lifecycle.answers = [new Error('a bug')];
    await expect(ending.end(jobRow(), itemRow(), MADE, SOURCE)).rejects.toThrow('a bug');
    expect(lifecycle.asked).toHaveLength(1);
  });

  it('an item that ended elsewhere meanwhile (cancelled, or a duplicate unit): its output is dropped', async () => {
    const { storage, lifecycle, ending } = setup();
    lifecycle.answers = [{ itemsEnded: [], jobEnded: false }];
    expect((await ending.end(jobRow(), itemRow(), MADE, SOURCE)).outcome).toBe('ended_elsewhere');
    expect(storage.objects.size).toBe(0);
    expect(storage.removed).toHaveLength(1);
  });

  it('the object store stays down: the item fails as upstream_error (retryable), with no asset', async () => {
    const { storage, lifecycle, ending } = setup();
    storage.failWrites = 10;
    expect(await ending.end(jobRow(), itemRow(), MADE, SOURCE)).toEqual({ outcome: 'failed', outputBytes: null });
    expect(lifecycle.asked[0][0]).toMatchObject({ status: 'failed', chargedCredits: 0, asset: null });
    expect(lifecycle.asked[0][0].error).toMatchObject({ code: 'upstream_error', retryable: true });
  });

  it("a run's failure ends the item failed with its code and message, charged 0, nothing stored", async () => {
    const { storage, lifecycle, ending } = setup();
    const failed = await ending.end(jobRow(), itemRow(), { ok: false, code: 'timeout', message: 'Too long.' }, SOURCE);
    expect(failed.outcome).toBe('failed');
    expect(storage.objects.size).toBe(0);
    expect(lifecycle.asked[0][0]).toMatchObject({ status: 'failed', chargedCredits: 0, asset: null });
    expect(lifecycle.asked[0][0].error).toMatchObject({ code: 'timeout', message: 'Too long.', param: 'inputs[0]' });
  });

  it('a made output is checked first: its measured media is stored, its checks end with the item', async () => {
    const { lifecycle, ending, runner } = setup();
    await ending.end(jobRow(), itemRow(), MADE, SOURCE);
    const [request] = runner.called('check') as { sourcePaths: string[]; output: { path: string } }[];
    expect(request).toMatchObject({ sourcePaths: SOURCE.sourcePaths, output: { path: MADE.path } });
    expect(lifecycle.asked[0][0]).toMatchObject({
      status: 'succeeded',
      asset: { media: runner.checkResult.ok ? runner.checkResult.measured : null },
      checks: runner.checkResult.ok ? runner.checkResult.checks : null,
    });
  });

  it('an output that fails a check is not stored: output_check_failed, charged 0, details name the check', async () => {
    const { storage, lifecycle, ending, runner } = setup();
    const failed = { name: 'frame_count', passed: false, expected: '300', measured: 299 };
    runner.checkResult = { ok: true, measured: {}, checks: [failed] };
    expect(await ending.end(jobRow(), itemRow(), MADE, SOURCE)).toEqual({ outcome: 'failed', outputBytes: null });
    expect(storage.objects.size).toBe(0);
    expect(lifecycle.asked[0][0]).toMatchObject({ status: 'failed', chargedCredits: 0, asset: null, checks: [failed] });
    expect(lifecycle.asked[0][0].error).toMatchObject({
      code: 'output_check_failed',
      retryable: false,
      details: { check: 'frame_count', expected: '300', measured: 299 },
    });
  });

  it('fail: only the open items asked for end, failed with the code', async () => {
    const { lifecycle, ending } = setup();
    lifecycle.claimed = {
      job: jobRow(),
      items: [
        itemRow({ index: 0, status: 'succeeded' }),
        itemRow({ index: 1, status: 'processing' }),
        itemRow({ index: 2, status: 'queued' }),
        itemRow({ index: 3, status: 'queued' }),
      ],
    };
    await ending.fail('job_spec', 'upstream_error', [0, 1, 2]);
    expect(lifecycle.asked[0].map((item) => [item.index, item.status, item.error?.code])).toEqual([
      [1, 'failed', 'upstream_error'],
      [2, 'failed', 'upstream_error'],
    ]);
    lifecycle.claimed = null;
    expect(await ending.fail('job_spec', 'upstream_error')).toBe(false);
  });
});
