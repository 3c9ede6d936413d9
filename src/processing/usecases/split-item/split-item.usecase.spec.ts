import type { NewSegment, SegmentsRepository } from '../../segments.repository';
import type { SegmentFiles } from '../../segment-files';
import type { SplitRequest } from '../../media-runner';
import {
  FakeRunner,
  itemRow,
  jobRow,
  MemoryStorage,
  silenceNestLogs,
  specConfig,
} from '../../../../test/support/processing-fakes';
import { SplitItem, type SplitItemCommand } from './split-item.usecase';

function setup() {
  const runner = new FakeRunner();
  const storage = new MemoryStorage();
  const recorded: NewSegment[][] = [];
  const removed: string[] = [];
  const segments = { record: async (_job: string, _index: number, list: NewSegment[]) => void recorded.push(list) };
  const files = { remove: async (jobId: string, index: number) => void removed.push(`${jobId}/${index}`) };
  const useCase = new SplitItem(
    segments as unknown as SegmentsRepository,
    files as unknown as SegmentFiles,
    runner,
    storage.asStorage(),
    specConfig({ segmentSeconds: 2 }),
  );
  return { useCase, runner, storage, recorded, removed };
}

function command(controller = new AbortController()): SplitItemCommand {
  return {
    job: jobRow(),
    item: itemRow({ duration_seconds: '6' }),
    inputPath: '/work/in-0',
    workDir: '/work',
    signal: controller.signal,
    timeLimitMs: 60_000,
  };
}

describe('SplitItem', () => {
  silenceNestLogs();

  it('cuts at keyframes (a millisecond early), stores parts and audio, records the segments', async () => {
    const { useCase, runner, storage, recorded } = setup();
    expect(await useCase.execute(command())).toEqual({ segments: [0, 1, 2] });
    const [split] = runner.called('split') as SplitRequest[];
    expect(split).toMatchObject({ inputPath: '/work/in-0', videoIndex: 0, dir: '/work/parts', timeLimitMs: 60_000 });
    expect(split.cuts).toEqual([1.999, 3.999]);
    expect([...storage.objects.keys()].sort()).toEqual([
      'segments/job_spec/0/audio.mov',
      'segments/job_spec/0/src-0.mp4',
      'segments/job_spec/0/src-1.mp4',
      'segments/job_spec/0/src-2.mp4',
    ]);
    expect(recorded[0]).toEqual([
      {
        segment: 0,
        startSeconds: 0,
        durationSeconds: 2,
        sourceKey: 'segments/job_spec/0/src-0.mp4',
        audio: { key: 'segments/job_spec/0/audio.mov', codec: 'aac' },
      },
      {
        segment: 1,
        startSeconds: 2,
        durationSeconds: 2,
        sourceKey: 'segments/job_spec/0/src-1.mp4',
        audio: { key: 'segments/job_spec/0/audio.mov', codec: 'aac' },
      },
      {
        segment: 2,
        startSeconds: 4,
        durationSeconds: 2,
        sourceKey: 'segments/job_spec/0/src-2.mp4',
        audio: { key: 'segments/job_spec/0/audio.mov', codec: 'aac' },
      },
    ]);
  });

  it('a source that became longer than priced fails the item as source_changed before anything is cut', async () => {
    const { useCase, runner } = setup();
    if (runner.probeResult.ok) runner.probeResult.probe.durationSeconds = 600;
    expect(await useCase.execute(command())).toMatchObject({ ok: false, code: 'source_changed' });
    expect(runner.called('split')).toEqual([]);
  });

  it('one pass instead: too few keyframes, unreadable keyframes, a failed cut, or other parts than planned', async () => {
    const cases: ((runner: FakeRunner) => void)[] = [
      (runner) => (runner.keyframeTimes = [0]),
      (runner) => (runner.keyframeTimes = null),
      (runner) => (runner.splitFails = true),
      (runner) => (runner.partCount = 2),
    ];
    for (const arrange of cases) {
      const { useCase, runner, storage, recorded } = setup();
      arrange(runner);
      expect(await useCase.execute(command())).toBeNull();
      expect(storage.objects.size).toBe(0);
      expect(recorded).toEqual([]);
    }
  });

  it('a cut that failed because the job was cancelled stops the item instead', async () => {
    const controller = new AbortController();
    const { useCase, runner } = setup();
    runner.splitFails = true;
    controller.abort();
    expect(await useCase.execute(command(controller))).toEqual({ ok: false, code: 'processing_failed' });
  });

  it('the object store stays down: the stored parts are removed and the item fails as upstream_error', async () => {
    const { useCase, storage, recorded, removed } = setup();
    storage.failWrites = 1;
    expect(await useCase.execute(command())).toMatchObject({ ok: false, code: 'upstream_error' });
    expect(removed).toEqual(['job_spec/0']);
    expect(recorded).toEqual([]);
  });
});
