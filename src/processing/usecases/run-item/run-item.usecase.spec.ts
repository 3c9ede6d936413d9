import type { AppConfig } from '../../../common/config/config';
import type { Storage } from '../../../common/storage/storage';
import type { JobLifecycle } from '../../../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../../../jobs/job.types';
import {
  FakeRunner,
  FakeWorkDirs,
  itemRow,
  jobRow,
  silenceNestLogs,
  specConfig,
} from '../../../../test/support/processing-fakes';
import type { ItemEnding } from '../../item-ending';
import type { ItemInput, ItemInputResult } from '../../item-input';
import type { RunItemRequest, RunItemResult } from '../../media-runner';
import type { ProcessingRepository } from '../../processing.repository';
import type { ProgressWriter } from '../../progress-writer';
import type { SegmentRow, SegmentsRepository } from '../../segments.repository';
import type { SplitItem } from '../split-item/split-item.usecase';
import { RunItem, type RunItemCommand } from './run-item.usecase';

interface Setup {
  job?: JobRow;
  item?: JobItemRow;
  taken?: boolean;
  input?: ItemInputResult;
  recordedSegments?: Partial<SegmentRow>[];
  split?: Awaited<ReturnType<SplitItem['execute']>>;
  config?: Partial<AppConfig>;
}

function setup(options: Setup = {}) {
  const job = options.job ?? jobRow();
  const item = options.item ?? itemRow({ duration_seconds: '3' });
  const runner = new FakeRunner();
  const workDirs = new FakeWorkDirs();
  const ended: { item: JobItemRow; result: RunItemResult }[] = [];
  const splits: unknown[] = [];
  const lifecycle = { takeItem: async () => (options.taken === false ? null : { job, item }) };
  const repository = { openItems: async () => [item.index] };
  const segments = { list: async () => options.recordedSegments ?? [] };
  const input = { prepare: async () => options.input ?? { ok: true, path: '/work/in-0' } };
  const splitItem = {
    execute: async (command: unknown) => {
      splits.push(command);
      return options.split ?? null;
    },
  };
  const ending = {
    end: async (_job: JobRow, endedItem: JobItemRow, result: RunItemResult) => {
      ended.push({ item: endedItem, result });
      return { outcome: result.ok ? 'succeeded' : 'failed', outputBytes: null };
    },
  };
  const progress = { forItem: () => () => undefined, phase: () => undefined };
  const useCase = new RunItem(
    lifecycle as unknown as JobLifecycle,
    repository as unknown as ProcessingRepository,
    segments as unknown as SegmentsRepository,
    input as unknown as ItemInput,
    splitItem as unknown as SplitItem,
    ending as unknown as ItemEnding,
    progress as unknown as ProgressWriter,
    workDirs.asWorkDirs(),
    runner,
    { backend: 'local' } as Storage,
    specConfig(options.config),
  );
  return { useCase, runner, workDirs, ended, splits };
}

function command(controller = new AbortController()): RunItemCommand {
  return {
    jobId: 'job_spec',
    index: 0,
    worker: 'wkr_spec',
    signal: controller.signal,
    stopping: new AbortController().signal,
    abort: () => controller.abort(),
  };
}

describe('RunItem', () => {
  silenceNestLogs();

  it('an item (or job) that already ended is not run', async () => {
    const { useCase, runner, workDirs, ended } = setup({ taken: false });
    expect(await useCase.execute(command())).toBeNull();
    expect(runner.calls).toEqual([]);
    expect(workDirs.created).toEqual([]);
    expect(ended).toEqual([]);
  });

  it('one pass: the input runs through the runner within the time left, its output ends the item, the folder goes', async () => {
    const { useCase, runner, workDirs, ended } = setup();
    expect(await useCase.execute(command())).toBeNull();
    const [request] = runner.called('run') as RunItemRequest[];
    expect(request).toMatchObject({ api: 'sdr2hdr', inputPath: '/work/in-0', outputPath: '/work/job_spec-0/out-0' });
    expect(request.timeLimitMs).toBeGreaterThan(3_590_000);
    expect(request.timeLimitMs).toBeLessThanOrEqual(3_600_000);
    expect(ended).toHaveLength(1);
    expect(ended[0].result).toMatchObject({ ok: true, path: '/work/job_spec-0/out-0.mp4' });
    expect(workDirs.removed).toEqual(workDirs.created);
  });

  it('the runner holds the input to what was priced: a longer source is refused as source_changed', async () => {
    const { useCase, runner } = setup();
    await useCase.execute(command());
    const [request] = runner.called('run') as RunItemRequest[];
    expect(request.admit({ durationSeconds: 3, width: 320, height: 180 })).toBeNull();
    expect(request.admit({ durationSeconds: 300, width: 320, height: 180 })).toMatchObject({
      ok: false,
      code: 'source_changed',
    });
  });

  it("past the job's time limit at a (re)start: the item ends as timeout and nothing runs", async () => {
    const started = new Date(Date.now() - 2 * 3600_000);
    const { useCase, runner, ended } = setup({ job: jobRow({ started_at: started }) });
    await useCase.execute(command());
    expect(runner.calls).toEqual([]);
    expect(ended[0].result).toMatchObject({ ok: false, code: 'timeout' });
  });

  it('an input that cannot run ends the item with its verdict; the runner is not called', async () => {
    const refused: ItemInputResult = { ok: false, code: 'content_policy_violation', message: 'Not allowed.' };
    const { useCase, runner, ended, workDirs } = setup({ input: refused });
    await useCase.execute(command());
    expect(runner.calls).toEqual([]);
    expect(ended.map((entry) => entry.result)).toEqual([refused]);
    expect(workDirs.removed).toEqual(workDirs.created);
  });

  it('cancelled while it ran: nothing is ended (the cancel ended the job and released its hold)', async () => {
    const controller = new AbortController();
    const { useCase, runner, ended } = setup();
    runner.runResult = (request) => {
      controller.abort();
      return {
        ok: true,
        path: `${request.outputPath}.mp4`,
        processedSeconds: 3,
        outputWidth: 320,
        outputHeight: 180,
        container: 'mp4',
        contentType: 'video/mp4',
        media: {},
      };
    };
    expect(await useCase.execute(command(controller))).toBeNull();
    expect(ended).toEqual([]);
  });

  it('a long item is split: its segments are handed back for queueing and nothing ends', async () => {
    const item = itemRow({ duration_seconds: '6' });
    const { useCase, runner, ended, splits } = setup({ item, split: { segments: [0, 1, 2] } });
    expect(await useCase.execute(command())).toEqual({ segments: [0, 1, 2] });
    expect(splits).toHaveLength(1);
    expect(runner.called('run')).toEqual([]);
    expect(ended).toEqual([]);
  });

  it('a long item that turns out not worth splitting runs in one pass', async () => {
    const { useCase, runner, ended } = setup({ item: itemRow({ duration_seconds: '6' }), split: null });
    await useCase.execute(command());
    expect(runner.called('run')).toHaveLength(1);
    expect(ended).toHaveLength(1);
  });

  it('an item split before (its unit run again): its unfinished segments are queued again, its input untouched', async () => {
    const recordedSegments = [
      { segment: 0, status: 'succeeded' as const },
      { segment: 1, status: 'processing' as const },
      { segment: 2, status: 'queued' as const },
    ];
    const { useCase, workDirs, splits } = setup({ item: itemRow({ duration_seconds: '6' }), recordedSegments });
    expect(await useCase.execute(command())).toEqual({ segments: [1, 2] });
    expect(workDirs.created).toEqual([]);
    expect(splits).toEqual([]);
  });

  it('every segment encoded but not joined: the last one is queued again, and its unit joins', async () => {
    const recordedSegments = [0, 1, 2].map((segment) => ({ segment, status: 'succeeded' as const }));
    const { useCase } = setup({ item: itemRow({ duration_seconds: '6' }), recordedSegments });
    expect(await useCase.execute(command())).toEqual({ segments: [2] });
  });
});
