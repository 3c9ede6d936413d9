import type { JobLifecycle } from '../../../jobs/job-lifecycle';
import type { JobItemRow, JobRow } from '../../../jobs/job.types';
import {
  connectionLost,
  FakeRunner,
  FakeWorkDirs,
  itemRow,
  jobRow,
  MemoryStorage,
  QUICK_OUTAGES,
  silenceNestLogs,
  specConfig,
} from '../../../../test/support/processing-fakes';
import type { ItemEnding } from '../../item-ending';
import type { EncodeSegmentRequest, RunItemResult } from '../../media-runner';
import type { ProgressWriter } from '../../progress-writer';
import type { SegmentFiles } from '../../segment-files';
import type { SegmentEnd, SegmentRow, SegmentsRepository } from '../../segments.repository';
import type { JoinItem } from '../join-item/join-item.usecase';
import { EncodeSegment, type EncodeSegmentCommand } from './encode-segment.usecase';

class FakeSegments {
  taken: Partial<SegmentRow> | null = { segment: 1, source_key: 'segments/job_spec/0/src-1.mp4' };
  open = true;
  all: Partial<SegmentRow>[] = [];
  endings: (SegmentEnd | Error)[] = [];
  readonly ended: unknown[] = [];
  readonly failed: number[] = [];

  async takeSegment() {
    return this.taken;
  }
  async itemOpen() {
    return this.open;
  }
  async list() {
    return this.all;
  }
  async endSegment(_jobId: string, _index: number, segment: number, ended: unknown): Promise<SegmentEnd> {
    this.ended.push({ segment, ...(ended as object) });
    const answer = this.endings.shift() ?? 'more_open';
    if (answer instanceof Error) throw answer;
    return answer;
  }
  async failSegment(_jobId: string, _index: number, segment: number) {
    this.failed.push(segment);
  }
}

function setup(options: { job?: JobRow } = {}) {
  const job = options.job ?? jobRow();
  const runner = new FakeRunner();
  const storage = new MemoryStorage();
  storage.objects.set('segments/job_spec/0/src-1.mp4', '/stored/src-1.mp4');
  const segments = new FakeSegments();
  const workDirs = new FakeWorkDirs();
  const removed: string[] = [];
  const joins: unknown[] = [];
  const ended: { item: JobItemRow; result: RunItemResult }[] = [];
  const lifecycle = { claim: async () => ({ job, items: [itemRow()] }) };
  const useCase = new EncodeSegment(
    lifecycle as unknown as JobLifecycle,
    segments as unknown as SegmentsRepository,
    {
      remove: async (jobId: string, index: number) => void removed.push(`${jobId}/${index}`),
    } as unknown as SegmentFiles,
    {
      end: async (_job: JobRow, item: JobItemRow, result: RunItemResult) => {
        ended.push({ item, result });
        return { outcome: 'failed', outputBytes: null };
      },
    } as unknown as ItemEnding,
    { forSegment: () => () => undefined } as unknown as ProgressWriter,
    { execute: async (command: unknown) => void joins.push(command) } as unknown as JoinItem,
    workDirs.asWorkDirs(),
    runner,
    storage.asStorage(),
    specConfig(),
    QUICK_OUTAGES,
  );
  return { useCase, runner, storage, segments, workDirs, removed, joins, ended };
}

function command(controller = new AbortController()): EncodeSegmentCommand {
  return {
    jobId: 'job_spec',
    index: 0,
    segment: 1,
    worker: 'wkr_spec',
    signal: controller.signal,
    abort: () => controller.abort(),
  };
}

describe('EncodeSegment', () => {
  silenceNestLogs();

  it('encodes its part, stores it and ends the segment; others still open: nothing more', async () => {
    const { useCase, runner, storage, segments, joins, workDirs } = setup();
    await useCase.execute(command());
    const [request] = runner.called('encodeSegment') as EncodeSegmentRequest[];
    expect(request).toMatchObject({
      inputPath: '/work/job_spec-0-s1/part.mp4',
      outputPath: '/work/job_spec-0-s1/enc.mp4',
    });
    expect(storage.objects.get('segments/job_spec/0/enc-1.mp4')).toBe('/work/job_spec-0-s1/enc.mp4');
    expect(segments.ended).toEqual([{ segment: 1, encodedKey: 'segments/job_spec/0/enc-1.mp4', processedSeconds: 2 }]);
    expect(joins).toEqual([]);
    expect(workDirs.removed).toEqual(workDirs.created);
  });

  it('the last segment to end joins the item, after its own folder is gone', async () => {
    const { useCase, segments, joins, workDirs } = setup();
    segments.endings = ['last'];
    await useCase.execute(command());
    expect(joins).toEqual([expect.objectContaining({ jobId: 'job_spec', index: 0 })]);
    expect(workDirs.removed).toEqual(workDirs.created);
  });

  it('PostgreSQL unreachable as the segment ends: the end is tried again, the part is not encoded twice', async () => {
    const { useCase, runner, segments, joins } = setup();
    segments.endings = [connectionLost(), connectionLost(), 'last'];
    await useCase.execute(command());
    expect(runner.called('encodeSegment')).toHaveLength(1);
    expect(segments.ended).toHaveLength(3);
    expect(joins).toHaveLength(1);
  });

  it('a segment that cannot be encoded fails, and its item with it; the segments are removed', async () => {
    const { useCase, runner, segments, ended, removed, storage } = setup();
    runner.encodeResult = { ok: false, code: 'processing_failed', message: 'Broken.' };
    await useCase.execute(command());
    expect(segments.failed).toEqual([1]);
    expect(ended.map((entry) => entry.result)).toEqual([runner.encodeResult]);
    expect(removed).toEqual(['job_spec/0']);
    expect(storage.objects.has('segments/job_spec/0/enc-1.mp4')).toBe(false);
  });

  it("past the job's time limit: the item ends as timeout without an encode", async () => {
    const { useCase, runner, ended } = setup({ job: jobRow({ started_at: new Date(Date.now() - 2 * 3600_000) }) });
    await useCase.execute(command());
    expect(runner.called('encodeSegment')).toEqual([]);
    expect(ended[0].result).toMatchObject({ ok: false, code: 'timeout' });
  });

  it('the item ended meanwhile (cancelled): nothing is stored or ended, the segments are removed', async () => {
    const { useCase, segments, storage, ended, removed } = setup();
    segments.open = false;
    await useCase.execute(command());
    expect(storage.objects.has('segments/job_spec/0/enc-1.mp4')).toBe(false);
    expect(segments.ended).toEqual([]);
    expect(ended).toEqual([]);
    expect(removed).toEqual(['job_spec/0']);
  });

  it('not taken (it ended before): joins when every segment is done — a unit whose worker died while joining', async () => {
    const { useCase, runner, segments, joins } = setup();
    segments.taken = null;
    segments.all = [{ status: 'succeeded' }, { status: 'succeeded' }];
    await useCase.execute(command());
    expect(runner.calls).toEqual([]);
    expect(joins).toHaveLength(1);
    segments.all = [{ status: 'succeeded' }, { status: 'processing' }];
    await useCase.execute(command());
    expect(joins).toHaveLength(1);
  });
});
